package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/runrecord"
)

// HoH@2 through the runner on Harbor's own separate-verifier-environment
// task (its task.toml and instruction; busybox images in place of
// ubuntu:24.04) given a Compose sidecar: the Developer, in the task
// container, fetches the sidecar's answer by service name into the declared
// artifacts at iteration 1 and removes one at iteration 2. Each checkpoint's
// verifier is built from tests/Dockerfile and receives the artifacts of
// that checkpoint's committed environment only, so checkpoint 1 scores 1 and
// checkpoint 2 scores 0; the sidecar, its network and every image go with
// the run.
func TestHarborComposeAndSeparateVerifierThroughTheRunner(t *testing.T) {
	c := dockerPrereqs(t)
	real := filepath.Join(repoRoot(t), "..", "shared", "benchmarks", "harbor-tasks", "harbor-examples", "tasks", "separate-verifier-environment")
	toml, err := os.ReadFile(filepath.Join(real, "task.toml"))
	if err != nil {
		t.Fatalf("real task data missing (../shared/benchmarks/harbor-tasks): %v", err)
	}
	instr, err := os.ReadFile(filepath.Join(real, "instruction.md"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	task := filepath.Join(root, "separate-verifier-environment")
	files := map[string]string{
		"task.toml":                       strings.Replace(string(toml), `docker_image = "ubuntu:24.04"`, `docker_image = "`+smokeBaseTag+`"`, 1),
		"instruction.md":                  string(instr),
		"environment/docker-compose.yaml": "services:\n  main:\n    depends_on: [answers]\n  answers:\n    build: {context: ./answers}\n",
		"environment/answers/Dockerfile": "FROM " + smokeBaseTag + "\n" +
			`CMD ["/bin/sh", "-c", "mkdir -p /www && echo 'separate verifier ok' > /www/index.html && exec httpd -f -p 80 -h /www"]` + "\n",
		"tests/Dockerfile": "FROM " + smokeBaseTag + "\nCOPY test.sh /tests/test.sh\n",
		"tests/test.sh": `#!/bin/sh
r=1
[ "$(cat /logs/artifacts/answer.txt 2>/dev/null)" = "separate verifier ok" ] || r=0
[ "$(cat /tmp/configured-artifact.txt 2>/dev/null)" = "configured artifact ok" ] || r=0
[ -e /tmp/agent-only.txt ] && r=0
echo $r > /logs/verifier/reward.txt
`,
	}
	for rel, body := range files {
		p := filepath.Join(task, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h := &installingHarness{byIteration: map[int]string{
		1: `mkdir -p /logs/artifacts && wget -q -O /logs/artifacts/answer.txt http://answers/ && echo 'configured artifact ok' > /tmp/configured-artifact.txt && echo scratch > /tmp/agent-only.txt`,
		2: `rm /tmp/configured-artifact.txt`,
	}}
	res, out, log := runHarborHoH2(t, root, h)
	assertRunRemoved(t, c, res.DockerRun)
	if len(res.Outcomes) != 1 || res.Outcomes[0].State != runrecord.StateDone {
		t.Fatalf("outcomes %+v\n%s", res.Outcomes, log)
	}
	rows, err := runrecord.ReadScores(filepath.Join(out, "scores.csv"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range rows {
		got[fmt.Sprintf("%d %s", r.Checkpoint, r.Metric)] = r.Value
	}
	if got["1 reward"] != 1 || got["2 reward"] != 0 || len(got) != 2 {
		t.Fatalf("scores %v\n%s", got, log)
	}
}

// runHarborHoH2 runs HoH@2 of the Harbor tasks under root in Docker, with h
// as every role's harness (the scripted provider's configuration names the
// model); it returns the result, the output directory and the run's log.
func runHarborHoH2(t *testing.T, root string, h *installingHarness) (*Result, string, string) {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "run")
	script := filepath.Join(repoRoot(t), "configs", "examples", "scripts", "harbor-smoke.yaml")
	cfg := `name: hoh2
output: ` + out + `
benchmark: {kind: harbor, path: ` + root + `}
configs:
  - label: double
    harness: codex
    provider: {name: scripted, api: responses, key_env: HOH_SCRIPTED_KEY, model: scripted-model}
    scripted: {script: ` + script + `}
conditions: [hoh@2]
retries: {contract: 1, infrastructure: 1, backoff: 10ms}
containers: {pids_limit: 321}
`
	if err := os.WriteFile(filepath.Join(dir, "exp.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := config.Load(filepath.Join(dir, "exp.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	o := opts(h)
	o.Out = &log
	res, err := Run(context.Background(), e, o)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	return res, out, log.String()
}
