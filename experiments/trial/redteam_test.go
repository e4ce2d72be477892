package trial

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/benchmark/builtin"
)

// Red-team: a Developer forges its own score by writing the evaluation
// cache hoh used to reuse. The recorded score must be the artifact's own.
func TestRedTeamForgedEvaluationIsRecomputed(t *testing.T) {
	forged := `{"metrics":{"pass_rate":100}}`
	h := &fakeHarness{devBroken: true, devWrites: map[string]string{"../evaluation/cp-1.json": forged}}
	dir := t.TempDir()
	s, err := runIn(dir, "vanilla", h)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Checkpoints[0].Metrics["pass_rate"]; got == 100 {
		t.Fatalf("forged pass_rate 100 recorded for a broken artifact")
	}
	data, _ := os.ReadFile(filepath.Join(Layout{dir}.Evaluation(), "cp-1.json"))
	if !strings.Contains(string(data), `"mac"`) {
		t.Fatalf("evaluation not rewritten under hoh's seal: %s", data)
	}
	// A resume reuses hoh's own sealed result (no second evaluation needed)
	// and a forged copy of it for another tree is refused.
	again, err := runIn(dir, "vanilla", h)
	if err != nil || again.Checkpoints[0].Metrics["pass_rate"] != s.Checkpoints[0].Metrics["pass_rate"] {
		t.Fatalf("resume: %v %+v", err, again)
	}
	edited := strings.Replace(string(data), `"pass_rate":`, `"pass_rate":100,"x":`, 1)
	if err := os.WriteFile(filepath.Join(Layout{dir}.Evaluation(), "cp-1.json"), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(Layout{dir}.Summary())
	third, err := runIn(dir, "vanilla", h)
	if err != nil || third.Checkpoints[0].Metrics["pass_rate"] == 100 {
		t.Fatalf("an edited sealed result was trusted: %v %+v", err, third)
	}
}

type recordingBench struct {
	builtin.Benchmark
	dirs []string
}

func (b *recordingBench) Evaluate(ctx context.Context, task benchmark.Task, dir string) (benchmark.Evaluation, error) {
	b.dirs = append(b.dirs, dir)
	return b.Benchmark.Evaluate(ctx, task, dir)
}

// Evaluation scratch copies are in the trial's private 0700 directory, not
// in a shared /tmp path another trial's agent could reach.
func TestEvaluationScratchIsPrivatePerTrial(t *testing.T) {
	dir := t.TempDir()
	b := &recordingBench{}
	ts, _ := b.Tasks(context.Background())
	spec := Spec{Key: "builtin/greet", Benchmark: "builtin", Task: "greet", Config: "fake", Arm: "vanilla", Rep: 1}
	if _, err := Run(context.Background(), dir, spec, Env{Bench: b, Task: ts[0], Harness: &fakeHarness{}}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(Layout{dir}.Private())
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("private directory: %v %v", err, fi)
	}
	if len(b.dirs) != 1 || filepath.Dir(b.dirs[0]) != (Layout{dir}).Private() {
		t.Fatalf("evaluated in %v, want a copy under %s", b.dirs, Layout{dir}.Private())
	}
}
