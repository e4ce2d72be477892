package harbor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/sandbox/docker"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/internal/testenv/dockerenv"
)

var (
	baseClient *docker.Client
	setupErr   error
)

// TestMain builds the busybox base image the synthetic tasks start FROM.
func TestMain(m *testing.M) {
	ctx := context.Background()
	tmp, _ := os.MkdirTemp("", "hoh-harbor-test-")
	code := func() int {
		baseClient, setupErr = docker.New(ctx, docker.Options{RunID: fmt.Sprintf("hoh-harbor-base-%d", os.Getpid())})
		if setupErr != nil {
			return m.Run()
		}
		bb, err := docker.FindBusybox()
		if err == nil {
			err = docker.BusyboxContext(tmp, bb)
		}
		if err == nil {
			_, err = baseClient.BuildImage(ctx, tmp, "", "hoh-harbor-test-base:latest")
		}
		setupErr = err
		return m.Run()
	}()
	if baseClient != nil {
		if err := baseClient.Close(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "cleanup:", err)
			code = 1
		}
	}
	os.RemoveAll(tmp)
	os.Exit(code)
}

func newBench(t *testing.T, gate *Gate) *Benchmark {
	t.Helper()
	if setupErr != nil {
		t.Fatalf("docker not available (run scripts/start-dockerd.sh; needs busybox-static): %v", setupErr)
	}
	c := dockerenv.Client(t, "harbor-"+t.Name())
	return &Benchmark{Dataset: "synthetic", Root: "testdata/tasks", Docker: c, Gate: gate}
}

func task(t *testing.T, b *Benchmark, id string) benchmark.Task {
	t.Helper()
	ts, err := b.Tasks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range ts {
		if x.ID == id {
			return x
		}
	}
	t.Fatalf("no task %s", id)
	return benchmark.Task{}
}

func TestLoadDefaultsAndSpec(t *testing.T) {
	ls, _, err := loadDir("synthetic", "testdata/tasks", "category")
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]Loaded{}
	for _, l := range ls {
		byID[l.Task.ID] = l
		if strings.Contains(l.Task.Spec, "HIDDEN-TEST-MARKER") || strings.Contains(l.Task.Spec, "echo 42") {
			t.Fatalf("%s: spec contains evaluator-only text", l.Task.ID)
		}
	}
	nr := byID["noreward"].Task.Limits
	if nr.CPUs != 1 || nr.MemoryMB != 32 || nr.StorageMB != 10240 || nr.GPUs != 0 || !nr.AllowInternet ||
		nr.AgentTimeout != 60*time.Second || nr.VerifierTimeout != 30*time.Second {
		t.Fatalf("defaults: %+v", nr)
	}
	sp := byID["speedup"].Task
	if sp.Category != "performance" || sp.Limits.AllowInternet {
		t.Fatalf("speedup: %+v", sp)
	}
	if a := byID["answer"].Task; a.Spec != "Read seed.txt in the workspace and write the number it names into answer.txt.\n" || a.Limits.CPUs != 0.5 {
		t.Fatalf("answer: %q %+v", a.Spec, a.Limits)
	}
}

func TestLoadDefaultsWhenAbsent(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "task.toml"), []byte("version = \"1.0\"\n[task]\nname = \"x\"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "instruction.md"), []byte("do it"), 0o644)
	l, err := LoadTask("d", dir, "")
	if err != nil {
		t.Fatal(err)
	}
	want := benchmark.Limits{CPUs: 1, MemoryMB: 2048, StorageMB: 10240, AllowInternet: true, AgentTimeout: 600 * time.Second, VerifierTimeout: 600 * time.Second}
	if l.Task.Limits != want {
		t.Fatalf("got %+v want %+v", l.Task.Limits, want)
	}
	if err := l.Runnable(); err == nil || !strings.Contains(err.Error(), "Dockerfile") {
		t.Fatalf("runnable: %v", err)
	}
}

func TestLoadErrorsNameTheFile(t *testing.T) {
	cases := map[string]string{
		"bad legacy size": "version = \"1.0\"\n[environment]\nmemory = \"lots\"\n",
		"wrong type":      "version = \"1.0\"\n[environment]\ncpus = \"two\"\n",
		"malformed":       "version = \"1.0\n",
		"negative memory": "version = \"1.0\"\n[environment]\nmemory_mb = -1\n",
	}
	for name, body := range cases {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "task.toml"), []byte(body), 0o644)
		os.WriteFile(filepath.Join(dir, "instruction.md"), []byte("x"), 0o644)
		_, err := LoadTask("d", dir, "")
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "task.toml")) {
			t.Errorf("%s: error %v does not name the file", name, err)
		}
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "task.toml"), []byte("version = \"1.0\"\n"), 0o644)
	if _, err := LoadTask("d", dir, ""); err == nil || !strings.Contains(err.Error(), "instruction.md") {
		t.Errorf("missing instruction: %v", err)
	}
}

// All real GameCraft-Bench task.toml files (schema 1.2) parse with the
// right limits; upstream's tasks/example template is a Harbor task too.
func TestLoadRealGameCraftTasks(t *testing.T) {
	root := testenv.SharedPath(t, "benchmarks", "gamecraft-bench", "tasks")
	ls, _, err := loadDir("gamecraft", root, "")
	if err != nil {
		t.Fatalf("shared benchmark data (../shared/benchmarks) required: %v", err)
	}
	if len(ls) != 141 {
		t.Fatalf("loaded %d tasks, want 140 and the example", len(ls))
	}
	for _, l := range ls {
		if l.Task.ID == "example" {
			continue
		}
		if l.Task.Limits.AgentTimeout != 2*time.Hour || l.Task.Spec == "" {
			t.Fatalf("%s: %+v", l.Task.ID, l.Task.Limits)
		}
	}
}

func TestGate(t *testing.T) {
	g := Gate{}
	cases := []struct {
		cat  string
		r    map[string]any
		want float64
	}{
		{"implementation", map[string]any{"correctness": 0.75}, 0.75},
		{"performance", map[string]any{"correctness": 0.6, "speedup": 3.0}, 0.3},
		{"performance", map[string]any{"correctness": 1.0, "speedup": 1.5}, 1.25},
		{"research", map[string]any{"reward": 0.42, "correctness": 0.0}, 0.42},
	}
	for _, c := range cases {
		got, err := g.Score(c.cat, c.r)
		if err != nil || got != c.want {
			t.Errorf("%s %v: got %v %v want %v", c.cat, c.r, got, err, c.want)
		}
	}
	custom := Gate{CorrectnessField: "metrics.pass_frac", SpeedupField: "metrics.speed"}
	got, err := custom.Score("performance", map[string]any{"metrics": map[string]any{"pass_frac": 1.0, "speed": 2.0}})
	if err != nil || got != 1.5 {
		t.Errorf("nested fields: %v %v", got, err)
	}
	if _, err := g.Score("weird", map[string]any{}); err == nil {
		t.Error("unknown category accepted")
	}
	if _, err := g.Score("implementation", map[string]any{}); err == nil {
		t.Error("missing field accepted")
	}
}

func TestOracleHighNopLow(t *testing.T) {
	b := newBench(t, nil)
	ctx := context.Background()
	tk := task(t, b, "answer")
	for _, c := range []struct {
		agent Agent
		want  float64
	}{{Oracle{}, 1}, {Nop{}, 0}} {
		ws := t.TempDir()
		tr, err := b.RunTrial(ctx, tk, c.agent, ws)
		if err != nil || tr.Failure != nil || tr.Evaluation == nil {
			t.Fatalf("%s: %v %+v", c.agent.Name(), err, tr)
		}
		if got := tr.Evaluation.Metrics["reward"]; got != c.want || tr.Evaluation.Error != "" {
			t.Fatalf("%s: reward %v want %v (%+v)", c.agent.Name(), got, c.want, tr.Evaluation)
		}
		// A_0 came from the image's WORKDIR.
		if b, _ := os.ReadFile(filepath.Join(ws, "seed.txt")); string(b) != "forty-two\n" {
			t.Fatalf("initial workspace: %q", b)
		}
		// The agent's workspace never held tests or the solution.
		if _, err := os.Stat(filepath.Join(ws, "tests")); err == nil {
			t.Fatal("tests/ leaked into the workspace")
		}
	}
}

func TestFrontierSWEGateEndToEnd(t *testing.T) {
	b := newBench(t, &Gate{})
	ctx := context.Background()
	tk := task(t, b, "speedup")
	tr, err := b.RunTrial(ctx, tk, Oracle{}, t.TempDir())
	if err != nil || tr.Evaluation == nil {
		t.Fatalf("%v %+v", err, tr)
	}
	if got := tr.Evaluation.Metrics["reward"]; got != 1.25 {
		t.Fatalf("oracle gated reward %v, want 1.25 (%+v)", got, tr.Evaluation)
	}
	rj, _ := tr.Evaluation.Details["reward_json"].(map[string]any)
	if d, _ := rj["detail"].(map[string]any); d["runs"] != 3.0 {
		t.Fatalf("reward.json not kept whole: %+v", rj)
	}
	tr, err = b.RunTrial(ctx, tk, Nop{}, t.TempDir())
	if err != nil || tr.Evaluation == nil || tr.Evaluation.Metrics["reward"] != 0 {
		t.Fatalf("nop: %v %+v", err, tr)
	}
}

func TestNoRewardIsRecorded(t *testing.T) {
	b := newBench(t, nil)
	tr, err := b.RunTrial(context.Background(), task(t, b, "noreward"), Nop{}, t.TempDir())
	if err != nil || tr.Evaluation == nil {
		t.Fatalf("%v %+v", err, tr)
	}
	ev := tr.Evaluation
	if !strings.Contains(ev.Error, "no reward") || ev.Metrics["reward"] != 0 ||
		!strings.Contains(fmt.Sprint(ev.Details["verifier_output"]), "crashed before writing") {
		t.Fatalf("%+v", ev)
	}
}

func TestMemoryBreachIsOOM(t *testing.T) {
	b := newBench(t, nil)
	tk := task(t, b, "noreward") // memory_mb = 32
	hog := Command{Script: "x=$(head -c 200000000 /dev/zero | tr '\\0' a); echo ${#x}"}
	tr, err := b.RunTrial(context.Background(), tk, hog, t.TempDir())
	if err != nil || tr.Failure == nil || !tr.Failure.OOM || tr.Failure.Kind != docker.Agent {
		t.Fatalf("expected OOM failure: %v %+v", err, tr)
	}
}

func TestKilledContainerIsInfraFailure(t *testing.T) {
	b := newBench(t, nil)
	ctx := context.Background()
	tk := task(t, b, "answer")
	go func() {
		// Kill this test's agent container once it is running.
		f := filters.NewArgs(filters.Arg("label", docker.LabelRun+"="+b.Docker.RunID()), filters.Arg("label", "hoh.task=answer"))
		for i := 0; i < 200; i++ {
			time.Sleep(100 * time.Millisecond)
			cs, _ := b.Docker.API.ContainerList(ctx, container.ListOptions{Filters: f})
			if len(cs) > 0 {
				time.Sleep(500 * time.Millisecond)
				b.Docker.API.ContainerKill(ctx, cs[0].ID, "KILL")
				return
			}
		}
	}()
	tr, err := b.RunTrial(ctx, tk, Command{Script: "sleep 30"}, t.TempDir())
	if err != nil || tr.Failure == nil || tr.Failure.Kind != docker.Infrastructure || tr.Evaluation != nil ||
		!strings.Contains(tr.Failure.Evidence, "stopped during command") {
		t.Fatalf("expected infrastructure failure: %v %+v", err, tr)
	}
}
