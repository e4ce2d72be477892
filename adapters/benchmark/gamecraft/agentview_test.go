package gamecraft

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/benchmark/kind"
	"github.com/hoh-research/hoh/adapters/sandbox"
)

func TestAgentEnvironmentOption(t *testing.T) {
	open := func(env string) (any, error) {
		return Kind.Open(kind.Opening{Path: realRoot(t), Options: kind.NewValues(map[string]any{"agent_environment": env})})
	}
	// Docker: the task's Dockerfile through the Harbor adapter. The
	// benchmark is a container benchmark and never a host agent view (whose
	// namespace mounts would not apply in a container); without a Docker
	// client (planning) it still lists every task.
	d, err := open(EnvDocker)
	if err != nil {
		t.Fatalf("agent_environment docker: %v", err)
	}
	db, ok := d.(*DockerBenchmark)
	if !ok {
		t.Fatalf("agent_environment docker opened %T", d)
	}
	if _, isView := d.(benchmark.AgentView); isView {
		t.Error("the Docker benchmark must not be a host AgentView")
	}
	if _, isContainer := d.(interface {
		ContainerImage(context.Context, benchmark.Task) (string, string, error)
	}); !isContainer {
		t.Error("the Docker benchmark must name its container image")
	}
	if ts, err := db.Tasks(context.Background()); err != nil || len(ts) != 140 {
		t.Errorf("docker tasks: %d %v", len(ts), err)
	}
	if err := db.Prepare(context.Background(), nil); err != nil {
		t.Errorf("planning without Docker prepares nothing: %v", err)
	}
	if !Kind.UsesDocker(kind.NewValues(map[string]any{"agent_environment": EnvDocker})) || Kind.UsesDocker(kind.NewValues(nil)) {
		t.Error("the kind needs Docker for agent_environment docker only")
	}
	if _, err := open("podman"); err == nil || !strings.Contains(err.Error(), "want host or docker") {
		t.Fatalf("agent_environment podman: %v", err)
	}
	b, err := open("")
	if err != nil || b.(*Benchmark).Opts.AgentEnvironment != EnvHost {
		t.Fatalf("the default is the host namespace: %v %+v", err, b)
	}
}

// The view a task's agents get: nothing under the task's tests/, the public
// assets and tools read-only, the game writable only for the Developer.
func TestAgentMountsShowOnlyPublicFiles(t *testing.T) {
	b := loadReal(t)
	td, _ := b.Task("platformer-arcborne")
	// A checkout with the asset libraries upstream's scripts fetch (the
	// shared copy has none) and its public tools.
	root := t.TempDir()
	for _, d := range []string{"assets/library", "assets/library-oga", "tools"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	b.Root = root
	ws := t.TempDir()
	for _, writable := range []bool{true, false} {
		ms, err := b.AgentMounts(td.Task, ws, filepath.Join(t.TempDir(), "scratch"), writable)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]sandbox.Mount{}
		for _, m := range ms {
			got[m.Target] = m
			if strings.HasPrefix(m.Source, td.Task.Dir) {
				t.Errorf("an agent mount shows the task's folder (its tests are evaluator-only): %+v", m)
			}
		}
		if g := got[GamePath]; g.Source != filepath.Join(ws, gameDir) || g.Writable != writable {
			t.Errorf("writable=%v: /workspace/game is %+v", writable, g)
		}
		for target, src := range map[string]string{AssetsPath + "/library": "assets/library", AssetsPath + "/library-oga": "assets/library-oga", ToolsPath: "tools"} {
			if m := got[target]; m.Source != filepath.Join(root, src) || m.Writable {
				t.Errorf("%s is %+v", target, m)
			}
		}
		if h, ok := got[filepath.Join(root, "tasks")]; !ok || h.Source != "" || h.Writable {
			t.Errorf("the checkout's tasks/ (every rubric) must be hidden, got %+v (present %v)", h, ok)
		}
		if ts, ok := got[TestsPath]; !ok || ts.Source != "" || ts.Writable {
			t.Errorf("/tests must be an empty read-only folder, got %+v (present %v)", ts, ok)
		}
	}
}

func TestRoleEnvironmentSaysWhetherScreenshotsCanBeTaken(t *testing.T) {
	b := loadReal(t)
	td, _ := b.Task("platformer-arcborne")
	bin := t.TempDir()
	// Test-only stand-ins: a "godot" that reports 4.6.2 and an "Xvfb".
	os.WriteFile(filepath.Join(bin, "godot"), []byte("#!/bin/sh\necho 4.6.2.stable.official\n"), 0o755)
	os.WriteFile(filepath.Join(bin, "Xvfb"), []byte("#!/bin/sh\nexit 0\n"), 0o755)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	b.Opts.GodotBin = filepath.Join(bin, "godot")
	if got := b.RoleEnvironment(context.Background(), td.Task); !strings.Contains(got, "Screenshots can be taken here") || !strings.Contains(got, "/workspace/tools/screenshot.sh") {
		t.Errorf("with Godot 4 and Xvfb: %q", got)
	}
	os.Remove(filepath.Join(bin, "Xvfb"))
	t.Setenv("PATH", bin)
	if got := b.RoleEnvironment(context.Background(), td.Task); !strings.Contains(got, "cannot be taken") || !strings.Contains(got, "Xvfb is not installed") {
		t.Errorf("without Xvfb: %q", got)
	}
	b.Opts.GodotBin = filepath.Join(bin, "none")
	if got := b.RoleEnvironment(context.Background(), td.Task); !strings.Contains(got, "Godot 4 is not installed") {
		t.Errorf("without Godot: %q", got)
	}
}
