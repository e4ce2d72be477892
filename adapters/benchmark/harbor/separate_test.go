package harbor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/internal/testenv"
)

func TestArtifactPaths(t *testing.T) {
	f := TaskFile{Artifacts: []any{"/tmp/a.txt", map[string]any{"source": "/app/out/", "destination": "out"}, "/tmp/a.txt", "/logs/artifacts"}}
	if got := strings.Join(artifactPaths(f), " "); got != "/app/out /logs/artifacts /tmp/a.txt" {
		t.Fatalf("artifact paths %q", got)
	}
}

// environment_mode = "separate" as Harbor's own separate-verifier-environment
// example declares it (its task.toml, instruction and solve.sh, with a local
// busybox image in place of ubuntu:24.04): the verifier is built from
// tests/Dockerfile and receives the declared artifact and /logs/artifacts
// from the agent's environment committed at the checkpoint, and nothing
// else of it (the agent's scratch file in /tmp, the workspace).
func TestSeparateVerifierGetsDeclaredArtifactsOnly(t *testing.T) {
	b := newBench(t, nil)
	src := testenv.SharedPath(t, "benchmarks", "harbor-tasks", "harbor-examples", "tasks", "separate-verifier-environment")
	root := t.TempDir()
	dir := realTask(t, root, "separate-verifier-environment", "tasks", "separate-verifier-environment")
	toml, _ := os.ReadFile(filepath.Join(dir, "task.toml"))
	writeFile(t, filepath.Join(dir, "task.toml"), strings.Replace(string(toml), `docker_image = "ubuntu:24.04"`, `docker_image = "hoh-harbor-test-base:latest"`, 1))
	solve, err := os.ReadFile(filepath.Join(src, "solution", "solve.sh"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "solution", "solve.sh"), string(solve)+"echo workspace-only > ws.txt\n")
	writeFile(t, filepath.Join(dir, "tests", "Dockerfile"), "FROM hoh-harbor-test-base:latest\nCOPY test.sh /tests/test.sh\nRUN echo built-from-tests > /verifier-marker\n")
	// The real test.sh's checks, for busybox sh, plus: the verifier is the
	// tests/ image and has no workspace.
	writeFile(t, filepath.Join(dir, "tests", "test.sh"), `#!/bin/sh
mkdir -p /logs/verifier
r=1
[ "$(cat /logs/artifacts/answer.txt 2>/dev/null)" = "separate verifier ok" ] || { echo no convention artifact; r=0; }
[ "$(cat /tmp/configured-artifact.txt 2>/dev/null)" = "configured artifact ok" ] || { echo no configured artifact; r=0; }
[ -e /tmp/agent-only.txt ] && { echo agent-only file leaked; r=0; }
[ -e /workspace/ws.txt ] && { echo workspace leaked; r=0; }
[ "$(cat /verifier-marker)" = built-from-tests ] || { echo not the tests image; r=0; }
echo $r > /logs/verifier/reward.txt
`)
	b.Root = root
	tk := task(t, b, "separate-verifier-environment")
	ctx := context.Background()
	for _, c := range []struct {
		agent Agent
		want  float64
	}{{Oracle{}, 1}, {Nop{}, 0}} {
		ws := t.TempDir()
		if err := b.InitialWorkspace(ctx, tk, ws); err != nil {
			t.Fatal(err)
		}
		env, err := b.StartEnvironment(ctx, tk, ws, nil)
		if err != nil {
			t.Fatal(err)
		}
		if ex, err := c.agent.Run(ctx, env, tk); err != nil || ex.Code != 0 {
			t.Fatalf("%s: %+v %v", c.agent.Name(), ex, err)
		}
		img, err := env.Commit(ctx, map[string]string{"hoh.checkpoint": "1"})
		env.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := b.Evaluate(benchmark.WithEnvironmentImage(ctx, img), tk, ws)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Metrics["reward"] != c.want {
			t.Fatalf("%s: reward %v, want %v: %v", c.agent.Name(), ev.Metrics["reward"], c.want, ev.Details["verifier_output"])
		}
		if c.want == 1 && !strings.Contains(strings.Join(ev.Details["artifacts"].([]string), " "), "/tmp/configured-artifact.txt") {
			t.Fatalf("artifacts given: %v", ev.Details["artifacts"])
		}
	}
}
