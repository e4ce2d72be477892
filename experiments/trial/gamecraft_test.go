package trial

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/benchmark/gamecraft"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/runrecord"
)

// GameCraft trials evaluated by the real upstream verifier
// (../shared/benchmarks/gamecraft-bench/gamecraft_bench, stub judge) in
// hoh's user+mount namespace. The fake harness stands in for the agent; it
// leaves a one-file Godot project in game/.

const gamecraftTask = "platformer-arcborne"

func gamecraftTrial(t *testing.T, v *gamecraft.Verifier) (*gamecraft.Benchmark, Env, string) {
	t.Helper()
	b, err := gamecraft.Load(testenv.SharedPath(t, "benchmarks", "gamecraft-bench"))
	if err != nil {
		t.Fatal(err)
	}
	b.Opts.Verifier = v
	td, ok := b.Task(gamecraftTask)
	if !ok {
		t.Fatalf("%s is missing from the real checkout", gamecraftTask)
	}
	h := &fakeHarness{devWrites: map[string]string{"game/project.godot": "config_version=5\n"}}
	return b, Env{Bench: b, Task: td.Task, Harness: h}, t.TempDir()
}

func gamecraftSpec(arm string) runrecord.TrialSpec {
	return runrecord.TrialSpec{Key: "gamecraft/" + gamecraftTask, Benchmark: gamecraft.Name, Task: gamecraftTask, Config: "fake", Arm: arm, Rep: 1}
}

// upstreamScores are Overall and the four components as upstream's
// breakdown.json gives them (reward x 100, category means of the aggregated
// requirement scores x 100), and build from build_ok.
func upstreamScores(t *testing.T, path string) map[string]float64 {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var bd struct {
		Reward       float64 `json:"reward"`
		BuildOK      bool    `json:"build_ok"`
		Requirements []struct {
			ID         string  `json:"id"`
			Aggregated float64 `json:"aggregated"`
		} `json:"requirements"`
	}
	if err := json.Unmarshal(raw, &bd); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	sums, counts := map[string]float64{}, map[string]float64{}
	for _, q := range bd.Requirements {
		sums[q.ID[:1]] += q.Aggregated
		counts[q.ID[:1]]++
	}
	want := map[string]float64{"overall": 100 * bd.Reward, "build": 0}
	if bd.BuildOK {
		want["build"] = 1
	}
	for l, m := range map[string]string{"M": "mechanics", "D": "depth", "V": "visuals", "A": "art"} {
		if counts[l] == 0 {
			t.Fatalf("%s has no %s requirements", path, l)
		}
		want[m] = 100 * sums[l] / counts[l]
	}
	return want
}

// checkRecordsFollowUpstream checks that checkpoint 1's records (summary,
// scores.csv) equal upstream's breakdown.json kept in cp-1-verifier/ and
// that every verifier output was kept there.
func checkRecordsFollowUpstream(t *testing.T, dir string, s *runrecord.Summary) map[string]float64 {
	t.Helper()
	l := runrecord.TrialLayout{Dir: dir}
	out := filepath.Join(l.Evaluation(), "cp-1-verifier")
	for _, f := range gamecraft.VerifierFiles {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("verifier output %s was not kept with the checkpoint's records: %v", f, err)
		}
	}
	want := upstreamScores(t, filepath.Join(out, gamecraft.BreakdownFile))
	if len(s.Checkpoints) != 1 {
		t.Fatalf("want one checkpoint, got %+v", s.Checkpoints)
	}
	rows, err := runrecord.ReadScores(l.Scores())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range rows {
		got[r.Metric] = r.Value
	}
	for m, w := range want {
		if math.Abs(s.Checkpoints[0].Metrics[m]-w) > 1e-9 || math.Abs(got[m]-w) > 1e-9 {
			t.Errorf("%s: summary %v, scores.csv %v, upstream's breakdown.json %v", m, s.Checkpoints[0].Metrics[m], got[m], w)
		}
	}
	return want
}

func TestGameCraftTrialWithoutGodotFailsTheBuildGate(t *testing.T) {
	// godot_bin names a file that does not exist: it shadows any godot on PATH.
	_, env, dir := gamecraftTrial(t, &gamecraft.Verifier{Judge: "stub", GodotBin: filepath.Join(t.TempDir(), "no-godot-here")})
	s, err := Run(context.Background(), dir, gamecraftSpec("hoh@1"), env)
	if err != nil {
		t.Fatalf("no Godot is a result (build gate 0), not a failed evaluation: %v", err)
	}
	want := checkRecordsFollowUpstream(t, dir, s)
	if want["build"] != 0 || s.Checkpoints[0].Metrics["build"] != 0 || s.Checkpoints[0].Metrics["overall"] != 0 {
		t.Fatalf("no Godot must fail the build gate: upstream %v, hoh %v", want, s.Checkpoints[0].Metrics)
	}
	if s.Status != runrecord.StatusCompleted {
		t.Fatalf("a failed build gate is a score, not an evaluation failure: %s %s", s.Status, s.Reason)
	}
}

func TestGameCraftTrialVerifierThatCannotRunIsNoScore(t *testing.T) {
	// gamecraft_bench cannot be imported: the verifier never runs.
	_, env, dir := gamecraftTrial(t, &gamecraft.Verifier{Judge: "stub", PythonPath: t.TempDir(), GodotBin: filepath.Join(t.TempDir(), "no-godot-here")})
	s, err := Run(context.Background(), dir, gamecraftSpec("hoh@1"), env)
	if err == nil || !strings.Contains(err.Error(), "could not run") || IsInfra(err) {
		t.Fatalf("want an evaluation that could not run (no score, not an infrastructure failure), got %v, %+v", err, s)
	}
	l := runrecord.TrialLayout{Dir: dir}
	if _, err := os.Stat(l.Summary()); err == nil {
		t.Fatal("a trial whose evaluation could not run must not be recorded as finished")
	}
	if _, err := os.Stat(l.Scores()); err == nil {
		t.Fatal("a trial whose evaluation could not run must have no scores")
	}
}

// standInGodot is a test-only stand-in for Godot, not Godot: a script that
// exits 0, so upstream's build check passes. It renders nothing.
func standInGodot(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "godot")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho stand-in godot, not Godot: \"$@\"\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGameCraftTrialWithStandInGodotEvaluatedTwiceAndRescored(t *testing.T) {
	b, env, dir := gamecraftTrial(t, &gamecraft.Verifier{Judge: "stub", GodotBin: standInGodot(t)})
	spec := gamecraftSpec("hoh@1")
	s1, err := Run(context.Background(), dir, spec, env)
	if err != nil {
		t.Fatal(err)
	}
	want := checkRecordsFollowUpstream(t, dir, s1)
	if want["build"] != 1 || s1.Checkpoints[0].Metrics["build"] != 1 {
		t.Fatalf("the stand-in Godot must pass the build gate: upstream %v, hoh %v", want, s1.Checkpoints[0].Metrics)
	}
	l := runrecord.TrialLayout{Dir: dir}
	out := filepath.Join(l.Evaluation(), "cp-1-verifier")
	if log, _ := os.ReadFile(filepath.Join(out, "build.log")); !strings.Contains(string(log), "--path /workspace/game") {
		t.Errorf("the build check did not see /workspace/game: build.log %q", log)
	}
	records := func() [][]byte {
		var got [][]byte
		for _, p := range []string{l.CheckpointEvaluation(1), l.Scores()} {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, data)
		}
		return got
	}
	first := records()

	// The same checkpoint evaluated again from scratch: the verifier runs
	// anew and the records come out identical.
	if err := os.Remove(l.CheckpointEvaluation(1)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(l.Summary()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "stale-marker"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s2, err := Run(context.Background(), dir, spec, env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "stale-marker")); err == nil {
		t.Fatal("the second evaluation did not run the verifier afresh")
	}
	if second := records(); !reflect.DeepEqual(first, second) || !reflect.DeepEqual(s1.Checkpoints, s2.Checkpoints) {
		t.Fatalf("the same checkpoint evaluated twice gives different records:\n%s\n%s", bytes.Join(first, nil), bytes.Join(second, nil))
	}

	// Rescoring unchanged outputs changes nothing, byte for byte.
	summary, _ := os.ReadFile(l.Summary())
	res, err := Rescore(dir, b, env.Task)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changed) != 0 || len(res.Kept) != 0 {
		t.Fatalf("rescore of unchanged outputs: %+v", res)
	}
	if again, _ := os.ReadFile(l.Summary()); !reflect.DeepEqual(first, records()) || !bytes.Equal(summary, again) {
		t.Fatal("rescoring unchanged verifier outputs changed the records")
	}

	// Rescoring an edited breakdown.json (as a judge rerun would leave it)
	// recomputes the records from it alone: nothing runs (no Godot now).
	env.Bench.(*gamecraft.Benchmark).Opts.Verifier.GodotBin = filepath.Join(t.TempDir(), "no-godot-here")
	edited := editBreakdown(t, filepath.Join(out, gamecraft.BreakdownFile), 0.5)
	res, err = Rescore(dir, b, env.Task)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Changed, []int{1}) || res.Status != runrecord.StatusCompleted {
		t.Fatalf("rescore after an edited breakdown.json: %+v", res)
	}
	var s3 runrecord.Summary
	if err := runrecord.ReadJSON(l.Summary(), &s3); err != nil {
		t.Fatal(err)
	}
	want = checkRecordsFollowUpstream(t, dir, &s3)
	if want["overall"] != 100*edited || s3.Checkpoints[0].Metrics["mechanics"] != 50 {
		t.Fatalf("rescored records do not follow the edited breakdown.json: want %v, got %v", want, s3.Checkpoints[0].Metrics)
	}
	// The rescored evaluation is hoh's sealed record: a rerun takes it as is.
	before := records()
	if _, err := Run(context.Background(), dir, spec, env); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, records()) {
		t.Fatal("a rerun re-evaluated the rescored checkpoint instead of keeping its sealed record")
	}
}

// editBreakdown sets every requirement's per-demo and aggregated score to v
// and the reward to what the task's formula then gives, and returns it.
func editBreakdown(t *testing.T, path string, v float64) float64 {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var bd map[string]any
	if err := json.Unmarshal(raw, &bd); err != nil {
		t.Fatal(err)
	}
	b, err := gamecraft.Load(testenv.SharedPath(t, "benchmarks", "gamecraft-bench"))
	if err != nil {
		t.Fatal(err)
	}
	td, _ := b.Task(gamecraftTask)
	vars := map[string]float64{"BUILD": 1}
	for _, q := range bd["requirements"].([]any) {
		r := q.(map[string]any)
		r["per_demo"] = map[string]any{"demo-1": v}
		r["aggregated"] = v
		vars[r["id"].(string)] = v
	}
	reward, err := td.Formula.Eval(vars)
	if err != nil {
		t.Fatal(err)
	}
	bd["reward"] = reward
	data, _ := json.Marshal(bd)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return reward
}
