package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/runrecord"
)

// seqBench is a host benchmark whose one task "seq" has three steps: each
// asks for <name>.txt holding "ok" and scores it (reward 1 or 0; seed 1
// when the task's seed.txt was handed on), keeping its reward file for
// rescoring; its gate wants reward 1; step failStart's start fails.
type seqBench struct{ failStart string }

var seqSteps = []string{"one", "two", "three"}

func (seqBench) Name() string { return "seq-bench" }
func (seqBench) Tasks(context.Context) ([]benchmark.Task, error) {
	return []benchmark.Task{{Benchmark: "seq-bench", ID: "seq", Spec: "write one.txt, two.txt and three.txt"}}, nil
}
func (seqBench) InitialWorkspace(_ context.Context, _ benchmark.Task, dir string) error {
	return os.WriteFile(filepath.Join(dir, "seed.txt"), []byte("seed"), 0o644)
}
func (seqBench) Check(context.Context, benchmark.Task, string) ([]benchmark.CheckResult, error) {
	return nil, nil
}
func (seqBench) Evaluate(context.Context, benchmark.Task, string) (benchmark.Evaluation, error) {
	return benchmark.Evaluation{}, fmt.Errorf("a multi-step task is evaluated by its steps")
}

func (b seqBench) Steps(t benchmark.Task) ([]benchmark.Step, error) {
	out := make([]benchmark.Step, len(seqSteps))
	for i, name := range seqSteps {
		st := t
		st.Spec = "write " + name + ".txt"
		st.Limits.AgentTimeout = time.Duration(7+i) * time.Minute // the step's agent timeout
		step := seqStep{seqBench: b, name: name}
		out[i] = benchmark.Step{Name: name, Task: st, Context: "steps: " + strings.Join(seqSteps, ", ") + "; this one: " + name + "\n", Bench: step,
			Start: func(_ context.Context, image, ws string, _ map[string]string) (benchmark.StepStart, error) {
				if name == b.failStart {
					return benchmark.StepStart{Failure: "setup of " + name + " failed"}, nil
				}
				started := step
				started.a0 = ws
				return benchmark.StepStart{Image: image, Bench: started}, os.WriteFile(filepath.Join(ws, "started-"+name), nil, 0o644)
			},
			Gate: func(ev benchmark.Evaluation) string {
				if ev.Error != "" || ev.Metrics["reward"] < 1 {
					return "reward below 1"
				}
				return ""
			}}
	}
	return out, nil
}

func (seqBench) StepsReward(_ benchmark.Task, evs []benchmark.Evaluation) benchmark.Evaluation {
	out := benchmark.Evaluation{Metrics: map[string]float64{"reward": 0}}
	n := 0
	for _, ev := range evs {
		if ev.Error == "" {
			n++
			out.Metrics["reward"] += ev.Metrics["reward"]
		}
	}
	out.Metrics["reward"] /= float64(max(n, 1))
	return out
}

type seqStep struct {
	seqBench
	name, a0 string
}

func (s seqStep) InitialWorkspace(ctx context.Context, t benchmark.Task, dir string) error {
	if s.a0 == "" {
		return fmt.Errorf("step %s was not started", s.name)
	}
	ents, err := os.ReadDir(s.a0)
	for _, e := range ents {
		data, _ := os.ReadFile(filepath.Join(s.a0, e.Name()))
		os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644)
	}
	return err
}

func (s seqStep) Evaluate(ctx context.Context, _ benchmark.Task, dir string) (benchmark.Evaluation, error) {
	got, _ := os.ReadFile(filepath.Join(dir, s.name+".txt"))
	reward := "0"
	if string(got) == "ok" {
		reward = "1"
	}
	out := benchmark.OutputDir(ctx)
	os.MkdirAll(out, 0o755)
	if err := os.WriteFile(filepath.Join(out, "reward.txt"), []byte(reward), 0o644); err != nil {
		return benchmark.Evaluation{}, err
	}
	return s.Rescore(benchmark.Task{}, out, benchmark.Evaluation{})
}

// Rescore reads the kept reward file (benchmark.Rescorer).
func (s seqStep) Rescore(_ benchmark.Task, out string, _ benchmark.Evaluation) (benchmark.Evaluation, error) {
	b, err := os.ReadFile(filepath.Join(out, "reward.txt"))
	if err != nil {
		return benchmark.Evaluation{}, benchmark.ErrNoEvaluatorOutput
	}
	return benchmark.Evaluation{Metrics: map[string]float64{"reward": map[string]float64{"1": 1}[string(b)]}}, nil
}

// seqHarness writes the file a step asks for ("bad" for vanilla's two);
// the first Developer call of HoH's step two is lost to an injected
// infrastructure failure. It counts Developer calls per step.
type seqHarness struct {
	mu    sync.Mutex
	calls map[string]int
	lost  bool
	// limits are the Developer invocations' wall limits, by step.
	limits map[string]time.Duration
}

func (h *seqHarness) Name() string    { return "seq" }
func (h *seqHarness) Version() string { return "1" }

var writeWhat = regexp.MustCompile(`write (\w+)\.txt`)

func (h *seqHarness) Run(_ context.Context, inv harness.Invocation) (harness.Result, error) {
	res := harness.Result{Outcome: harness.OutcomeCompleted, Usage: harness.Usage{Input: 10, Output: 1, Total: 11}, SessionID: "s"}
	switch inv.Role {
	case harness.RolePlanner:
		res.FinalMessage = `{"objective":"o","tasks":[{"id":"T1","description":"d"}],"preserve":[],"acceptance":[{"id":"R1","requirement":"r","observation":"o"}]}`
		return res, nil
	case harness.RoleQA:
		res.FinalMessage = `{"iteration":1,"qa_status":"fail","verified_records":[],"gap_records":[{"claim_id":"c1","claim":"unchecked","status":"gap"}]}`
		return res, nil
	}
	ms := writeWhat.FindAllStringSubmatch(inv.Prompt, -1)
	name := ms[len(ms)-1][1] // the step's instruction comes last
	hoh := strings.Contains(inv.Prompt, "Role: Developer")
	h.mu.Lock()
	if hoh && name == "two" && !h.lost {
		h.lost = true
		h.mu.Unlock()
		return harness.Result{Outcome: harness.OutcomeInfraFailure, Evidence: "HTTP 503 (injected)"}, nil
	}
	h.calls[fmt.Sprintf("%v %s", hoh, name)]++
	h.limits[name] = inv.WallTimeout
	h.mu.Unlock()
	content := "ok"
	if !hoh && name == "two" {
		content = "bad"
	}
	os.WriteFile(filepath.Join(inv.WorkDir, name+".txt"), []byte(content), 0o644)
	res.FinalMessage = `{"summary":"wrote it","self_tests":[]}`
	return res, nil
}

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
	h := &seqHarness{calls: map[string]int{}, limits: map[string]time.Duration{}}
	o := opts(h)
	o.Bench = seqBench{failStart: "three"}
	res := mustRun(t, e, o)
	for _, oc := range res.Outcomes {
		if oc.State != runrecord.StateDone {
			t.Fatalf("%s: %+v", oc.Trial.Dir, oc)
		}
	}
	want := map[string]float64{"vanilla@1 reward": 0.5, "vanilla@1 step.one.reward": 1, "vanilla@1 step.two.reward": 0,
		"hoh@2 reward": 1, "hoh@2 step.one.reward": 1, "hoh@2 step.two.reward": 1}
	assertSeqScores(t, out, want)
	if h.calls["true one"] != 2 || h.calls["true two"] != 2 || h.calls["false three"] != 0 {
		t.Errorf("developer calls %v: HoH's steps run twice each (the first not again after the replaced attempt), vanilla's third never", h.calls)
	}
	if h.limits["one"] != 7*time.Minute || h.limits["two"] != 8*time.Minute {
		t.Errorf("Developer wall limits %v, want each step's agent timeout (the config sets none)", h.limits)
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
	var steps int64
	for i, name := range seqSteps[:2] {
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
