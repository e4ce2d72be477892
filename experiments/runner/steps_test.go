package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/internal/testenv/stepbench"
	"github.com/hoh-research/hoh/runrecord"
)

// The runner's step sequence on a host benchmark, under vanilla and HoH@2:
// each step starts from what the previous one handed on (and what its
// start added); vanilla's second step scores below its gate, so the third
// never runs; HoH's third step fails to start, and its second step resumes
// after a replaced attempt without running the first again; the trial's
// reward is the benchmark's aggregation, each step's its own metric, and
// hoh rescore recomposes it from the steps' kept outputs.
func TestStepSequenceGateStartFailureResumeAndRescore(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "script.yaml"), []byte("entries:\n  - name: any\n    match: .\n    repeat: true\n    steps:\n      - say: ok\n"), 0o644)
	text := "name: seq\noutput: " + out + "\nbenchmark: {kind: builtin}\nconfigs:\n  - label: h\n    harness: codex\n" +
		"    provider: {name: scripted, api: responses, key_env: HOH_UNIT_KEY, model: m}\n    scripted: {script: script.yaml}\n" +
		"conditions: [vanilla, hoh@2]\nretries: {contract: 1, infrastructure: 2, backoff: 1ms}\n"
	os.WriteFile(filepath.Join(dir, "exp.yaml"), []byte(text), 0o644)
	e, err := config.Load(filepath.Join(dir, "exp.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	h := stepbench.NewHarness()
	o := opts(h)
	o.Bench = stepbench.Bench{FailStart: "three"}
	res := mustRun(t, e, o)
	for _, oc := range res.Outcomes {
		if oc.State != runrecord.StateDone {
			t.Fatalf("%s: %+v", oc.Trial.Dir, oc)
		}
	}
	want := map[string]float64{"vanilla@1 reward": 0.5, "vanilla@1 step.one.reward": 1, "vanilla@1 step.two.reward": 0,
		"hoh@2 reward": 1, "hoh@2 step.one.reward": 1, "hoh@2 step.two.reward": 1}
	assertSeqScores(t, out, want)
	if h.Calls["true one"] != 2 || h.Calls["true two"] != 2 || h.Calls["false three"] != 0 {
		t.Errorf("developer calls %v: HoH's steps run twice each (the first not again after the replaced attempt), vanilla's third never", h.Calls)
	}
	if h.Limits["one"] != 7*time.Minute || h.Limits["two"] != 8*time.Minute {
		t.Errorf("Developer wall limits %v, want each step's agent timeout (the config sets none)", h.Limits)
	}
	hoh := runrecord.TrialLayout{Dir: filepath.Join(out, "h", "hoh@2", "seq", "rep-1")}
	for _, f := range []string{"seed.txt", "one.txt", "started-two"} {
		if _, err := os.Stat(filepath.Join(hoh.Step(1, "two").Workspace(), f)); err != nil {
			t.Errorf("step two's artifact lacks %s handed on or added by its start: %v", f, err)
		}
	}
	var recs []runrecord.StepRecord
	runrecord.ReadJSON(hoh.StepsRecord(), &recs)
	if len(recs) != 3 || recs[2].StartFailure != "setup of three failed" || recs[1].Checkpoint != 2 {
		t.Errorf("hoh steps.json %+v", recs)
	}
	van := runrecord.TrialLayout{Dir: filepath.Join(out, "h", "vanilla", "seq", "rep-1")}
	runrecord.ReadJSON(van.StepsRecord(), &recs)
	if len(recs) != 3 || recs[1].Stopped != "reward below 1" || !recs[2].NotRun {
		t.Errorf("vanilla steps.json %+v", recs)
	}
	for _, r := range recs {
		if r.Pending {
			t.Errorf("a finished trial's steps.json has a pending step: %+v", r)
		}
	}
	var steps int64
	for i, name := range stepbench.Names[:2] {
		u, _ := runrecord.LedgerUsage(hoh.Step(i, name).Usage())
		steps += u.Total
	}
	if spent := trialSpent(hoh); steps == 0 || spent.Total != steps {
		t.Errorf("spent on hoh's trial %d tokens, its steps' ledgers %d", spent.Total, steps)
	}
	before := snapshot(t, out)
	if _, err := Rescore(context.Background(), e, o.Bench); err != nil {
		t.Fatal(err)
	}
	for p, b := range snapshot(t, out) {
		if string(before[p]) != string(b) {
			t.Errorf("rescoring unchanged outputs changed %s", p)
		}
	}
	// The kept output of vanilla's first step now says 0.
	os.WriteFile(filepath.Join(van.Step(0, "one").Evaluation(), "cp-1-verifier", "reward.txt"), []byte("0"), 0o644)
	if _, err := Rescore(context.Background(), e, o.Bench); err != nil {
		t.Fatal(err)
	}
	want["vanilla@1 reward"], want["vanilla@1 step.one.reward"] = 0, 0
	assertSeqScores(t, out, want)
}

func assertSeqScores(t *testing.T, out string, want map[string]float64) {
	t.Helper()
	rows, err := runrecord.ReadScores(filepath.Join(out, "scores.csv"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range rows {
		got[fmt.Sprintf("%s@%d %s", r.Condition, r.Checkpoint, r.Metric)] = r.Value
	}
	if len(got) != len(want) || len(rows) != len(want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
}
