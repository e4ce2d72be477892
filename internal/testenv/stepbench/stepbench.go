// Package stepbench is a host benchmark with one multi-step task and a
// harness that does its steps, so that tests can make a multi-step run
// (Harbor's [[steps]] as the runner runs them) without Docker or a model:
// the runner's step tests, and hoh status, show and view on its records.
// Imported only by tests.
package stepbench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/runrecord"
)

// Names are the steps of the task "seq", in order.
var Names = []string{"one", "two", "three"}

// Bench is a host benchmark whose one task "seq" has the three steps of
// Names: each asks for <name>.txt holding "ok" and scores it (reward 1 or
// 0), keeping its reward file for rescoring; its gate wants reward 1; the
// start of step FailStart fails. Step i's agent timeout is 7+i minutes.
type Bench struct{ FailStart string }

func (Bench) Name() string { return "seq-bench" }
func (Bench) Tasks(context.Context) ([]benchmark.Task, error) {
	return []benchmark.Task{{Benchmark: "seq-bench", ID: "seq", Spec: "write one.txt, two.txt and three.txt"}}, nil
}
func (Bench) InitialWorkspace(_ context.Context, _ benchmark.Task, dir string) error {
	return os.WriteFile(filepath.Join(dir, "seed.txt"), []byte("seed"), 0o644)
}
func (Bench) Check(context.Context, benchmark.Task, string) ([]runrecord.CheckResult, error) {
	return nil, nil
}
func (Bench) Evaluate(context.Context, benchmark.Task, string) (runrecord.Evaluation, error) {
	return runrecord.Evaluation{}, fmt.Errorf("a multi-step task is evaluated by its steps")
}

// Steps are the task's steps (benchmark.Stepped).
func (b Bench) Steps(t benchmark.Task) ([]benchmark.Step, error) {
	out := make([]benchmark.Step, len(Names))
	for i, name := range Names {
		st := t
		st.Spec = "write " + name + ".txt"
		st.Limits.AgentTimeout = time.Duration(7+i) * time.Minute // the step's agent timeout
		step := stepBench{Bench: b, name: name}
		out[i] = benchmark.Step{Name: name, Task: st, Context: "steps: " + strings.Join(Names, ", ") + "; this one: " + name + "\n", Bench: step,
			Start: func(_ context.Context, image, ws string, _ map[string]string) (benchmark.StepStart, error) {
				if name == b.FailStart {
					return benchmark.StepStart{Failure: "setup of " + name + " failed"}, nil
				}
				started := step
				started.a0 = ws
				return benchmark.StepStart{Image: image, Bench: started}, os.WriteFile(filepath.Join(ws, "started-"+name), nil, 0o644)
			},
			Gate: func(ev runrecord.Evaluation) string {
				if ev.Error != "" || ev.Metrics["reward"] < 1 {
					return "reward below 1"
				}
				return ""
			}}
	}
	return out, nil
}

// StepsReward is the mean reward of the steps with one (benchmark.Stepped).
func (Bench) StepsReward(_ benchmark.Task, evs []runrecord.Evaluation) runrecord.Evaluation {
	out := runrecord.Evaluation{Metrics: map[string]float64{"reward": 0}}
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

type stepBench struct {
	Bench
	name, a0 string
}

func (s stepBench) InitialWorkspace(ctx context.Context, t benchmark.Task, dir string) error {
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

func (s stepBench) Evaluate(ctx context.Context, _ benchmark.Task, dir string) (runrecord.Evaluation, error) {
	got, _ := os.ReadFile(filepath.Join(dir, s.name+".txt"))
	reward := "0"
	if string(got) == "ok" {
		reward = "1"
	}
	out := benchmark.OutputDir(ctx)
	os.MkdirAll(out, 0o755)
	if err := os.WriteFile(filepath.Join(out, "reward.txt"), []byte(reward), 0o644); err != nil {
		return runrecord.Evaluation{}, err
	}
	return s.Rescore(benchmark.Task{}, out, runrecord.Evaluation{})
}

// Rescore reads the kept reward file (benchmark.Rescorer).
func (s stepBench) Rescore(_ benchmark.Task, out string, _ runrecord.Evaluation) (runrecord.Evaluation, error) {
	b, err := os.ReadFile(filepath.Join(out, "reward.txt"))
	if err != nil {
		return runrecord.Evaluation{}, benchmark.ErrNoEvaluatorOutput
	}
	return runrecord.Evaluation{Metrics: map[string]float64{"reward": map[string]float64{"1": 1}[string(b)]}}, nil
}

// Harness writes the file a step asks for ("bad" for Vanilla's step two,
// so that its gate stops Vanilla there); the first HoH Developer call of
// step two is lost to an injected infrastructure failure. Every call uses
// 10 input and 1 output tokens.
type Harness struct {
	mu sync.Mutex
	// Calls counts the Developer calls by "<hoh> <step>" ("true two").
	Calls map[string]int
	lost  bool
	// Limits are the Developer invocations' wall limits, by step.
	Limits map[string]time.Duration
	// Before, when set, is called before each invocation of step with
	// role does anything (a test may hold the trial there).
	Before func(step string, role runrecord.Role)
}

// NewHarness is a Harness with empty counts.
func NewHarness() *Harness {
	return &Harness{Calls: map[string]int{}, Limits: map[string]time.Duration{}}
}

func (h *Harness) Name() string    { return "seq" }
func (h *Harness) Version() string { return "1" }

var writeWhat = regexp.MustCompile(`write (\w+)\.txt`)

func (h *Harness) Run(_ context.Context, inv harness.Invocation) (runrecord.Result, error) {
	ms := writeWhat.FindAllStringSubmatch(inv.Prompt, -1)
	name := ""
	if len(ms) > 0 {
		name = ms[len(ms)-1][1] // the step's instruction comes last
	}
	if h.Before != nil {
		h.Before(name, inv.Role)
	}
	res := runrecord.Result{Outcome: runrecord.OutcomeCompleted, Usage: runrecord.Usage{Input: 10, Output: 1, Total: 11}, SessionID: "s"}
	switch inv.Role {
	case runrecord.RolePlanner:
		res.FinalMessage = `{"objective":"o","tasks":[{"id":"T1","description":"d"}],"preserve":[],"acceptance":[{"id":"R1","requirement":"r","observation":"o"}]}`
		return res, nil
	case runrecord.RoleQA:
		res.FinalMessage = `{"iteration":1,"qa_status":"fail","verified_records":[],"gap_records":[{"claim_id":"c1","claim":"unchecked","status":"gap"}]}`
		return res, nil
	}
	hoh := strings.Contains(inv.Prompt, "Role: Developer")
	h.mu.Lock()
	if hoh && name == "two" && !h.lost {
		h.lost = true
		h.mu.Unlock()
		return runrecord.Result{Outcome: runrecord.OutcomeInfraFailure, Evidence: "HTTP 503 (injected)"}, nil
	}
	h.Calls[fmt.Sprintf("%v %s", hoh, name)]++
	h.Limits[name] = inv.WallTimeout
	h.mu.Unlock()
	content := "ok"
	if !hoh && name == "two" {
		content = "bad"
	}
	os.WriteFile(filepath.Join(inv.WorkDir, name+".txt"), []byte(content), 0o644)
	res.FinalMessage = `{"summary":"wrote it","self_tests":[]}`
	return res, nil
}
