package harbor

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/benchmark/conformance"
	"github.com/hoh-research/hoh/runrecord"
)

// Harbor's own multi-step examples load as steps: each step a task with its
// instruction and its (or the task's) agent and verifier timeouts, the
// advanced one's min_reward gates and [steps.verifier.env] over the task's.
func TestHarborMultiStepExamplesLoadAsSteps(t *testing.T) {
	root := filepath.Join(harborTasks, "harbor-examples", "tasks")
	b := &Benchmark{Dataset: "harbor", Root: root}
	for _, c := range []struct {
		id      string
		names   []string
		timeout []float64 // agent timeouts, seconds
	}{
		{"hello-multi-step-simple", []string{"create-file", "append-content"}, []float64{30, 30}},
		{"hello-multi-step-advanced", []string{"scaffold", "implement", "document"}, []float64{60, 90, 60}},
		{"separate-verifier-multi-step", []string{"prepare-artifacts", "finish-artifacts"}, []float64{60, 60}},
	} {
		l, err := LoadTask("harbor", filepath.Join(root, c.id), "")
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Runnable(); err != nil || len(l.Unsupported()) != 0 {
			t.Errorf("%s: runnable %v, refused %v", c.id, err, l.Unsupported())
		}
		steps, err := b.Steps(l.Task)
		if err != nil || len(steps) != len(c.names) {
			t.Fatalf("%s: %d steps, %v", c.id, len(steps), err)
		}
		for i, s := range steps {
			want, _ := os.ReadFile(filepath.Join(root, c.id, "steps", c.names[i], "instruction.md"))
			if s.Name != c.names[i] || s.Task.Spec != string(want) || s.Task.ID != c.id || s.Task.Limits.AgentTimeout.Seconds() != c.timeout[i] {
				t.Errorf("%s step %d: %s %q timeout %s", c.id, i, s.Name, s.Task.Spec, s.Task.Limits.AgentTimeout)
			}
			if !strings.Contains(s.Context, c.names[i]+" (this step)") || (i > 0 && !strings.Contains(s.Context, strings.TrimSpace(steps[0].Task.Spec))) {
				t.Errorf("%s step %d context:\n%s", c.id, i, s.Context)
			}
			if i+1 < len(steps) && strings.Contains(s.Context, strings.TrimSpace(steps[i+1].Task.Spec)) {
				t.Errorf("%s step %d: the context shows a later step's instruction", c.id, i)
			}
		}
	}
	l, _ := LoadTask("harbor", filepath.Join(root, "hello-multi-step-advanced"), "")
	f := l.File.ForStep(1)
	if f.Verifier.Env["EXPECTED_GREETING"] != "Hello, Harbor!" || l.File.Verifier.Env["EXPECTED_GREETING"] != "" {
		t.Errorf("step env %v, task env %v", f.Verifier.Env, l.File.Verifier.Env)
	}
	if got := testsSources(l.Task.Dir, f); len(got) != 2 || !strings.HasSuffix(got[1], "steps/implement/tests") {
		t.Errorf("tests sources %v", got)
	}
	sv, _ := LoadTask("harbor", filepath.Join(root, "separate-verifier-multi-step"), "")
	if separateVerifier(sv.File.ForStep(0).Verifier) || !separateVerifier(sv.File.ForStep(1).Verifier) ||
		verifierContext(sv.Task.Dir, sv.File.ForStep(1)) != filepath.Join(sv.Task.Dir, "tests") {
		t.Errorf("separate-verifier-multi-step: step modes not as declared")
	}
	if got := artifactPaths(sv.File.ForStep(1)); strings.Join(got, " ") != "/logs/artifacts /tmp/step-two-configured.txt /tmp/task-configured.txt" {
		t.Errorf("step 2 artifacts %v", got)
	}
}

// The min_reward gate as Harbor applies it: a number gates "reward", a
// table each key, a missing key fails, and a step without a reward stops
// the ones after it whatever its threshold.
func TestStepGate(t *testing.T) {
	ev := func(m map[string]float64) runrecord.Evaluation { return runrecord.Evaluation{Metrics: m} }
	for _, c := range []struct {
		min  MinReward
		ev   runrecord.Evaluation
		stop bool
	}{
		{nil, ev(map[string]float64{"reward": 0}), false},
		{MinReward{"reward": 1}, ev(map[string]float64{"reward": 1}), false},
		{MinReward{"reward": 1}, ev(map[string]float64{"reward": 0.99}), true},
		{MinReward{"reward": 0.5}, ev(map[string]float64{"reward": 0.5}), false},
		{MinReward{"safety": 1}, ev(map[string]float64{"reward": 1}), true},
		{MinReward{"safety": 1, "reward": 0}, ev(map[string]float64{"reward": 1, "safety": 1}), false},
		{nil, runrecord.Evaluation{Metrics: map[string]float64{"reward": 0}, Error: "verifier wrote no reward"}, true},
	} {
		why := stepGate(Step{Name: "s", MinReward: c.min})(c.ev)
		if (why != "") != c.stop {
			t.Errorf("min %v on %+v: %q", c.min, c.ev, why)
		}
	}
}

// Harbor's aggregation: mean takes per-key means over the steps with a
// reward (a key a step lacks counts 0, a step without a reward is left
// out); final takes the last step's as it is, none when it gave none.
func TestStepsReward(t *testing.T) {
	ok := func(m map[string]float64) runrecord.Evaluation { return runrecord.Evaluation{Metrics: m} }
	none := runrecord.Evaluation{Metrics: map[string]float64{"reward": 0}, Error: "no reward"}
	mean := stepsReward("", []runrecord.Evaluation{ok(map[string]float64{"reward": 1, "speed": 0.5}), none, ok(map[string]float64{"reward": 0})})
	if mean.Error != "" || mean.Metrics["reward"] != 0.5 || mean.Metrics["speed"] != 0.25 {
		t.Errorf("mean: %+v", mean)
	}
	final := stepsReward(StrategyFinal, []runrecord.Evaluation{ok(map[string]float64{"reward": 1}), ok(map[string]float64{"reward": 0.25, "x": 3})})
	if final.Metrics["reward"] != 0.25 || final.Metrics["x"] != 3 {
		t.Errorf("final: %+v", final)
	}
	if r := stepsReward(StrategyFinal, []runrecord.Evaluation{ok(map[string]float64{"reward": 1}), none}); r.Error == "" || r.Metrics["reward"] != 0 {
		t.Errorf("final without a last reward: %+v", r)
	}
	if r := stepsReward(StrategyMean, []runrecord.Evaluation{none}); r.Error == "" || math.IsNaN(r.Metrics["reward"]) || r.Metrics["reward"] != 0 {
		t.Errorf("mean without any reward: %+v", r)
	}
}

// Malformed steps are errors naming the file: a missing instruction, a
// repeated name, an unknown strategy, a min_reward that is no number.
func TestMalformedStepsNameTheFile(t *testing.T) {
	root := t.TempDir()
	for name, body := range map[string]string{
		"no-instruction": "[[steps]]\nname = \"a\"\n",
		"twice":          "[[steps]]\nname = \"a\"\n[[steps]]\nname = \"a\"\n",
		"strategy":       "multi_step_reward_strategy = \"best\"\n[[steps]]\nname = \"a\"\n",
		"min-reward":     "[[steps]]\nname = \"a\"\nmin_reward = \"high\"\n",
	} {
		dir := writeTaskDir(t, root, name, body)
		if name != "no-instruction" {
			os.MkdirAll(filepath.Join(dir, "steps", "a"), 0o755)
			os.WriteFile(filepath.Join(dir, "steps", "a", "instruction.md"), []byte("do a\n"), 0o644)
		}
		_, err := LoadTask("d", dir, "")
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "task.toml")) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// hoh tasks check on Harbor's own examples: the multi-step ones pass; the
// only errors are the Windows tasks, the GPU task on a host without one,
// and hello-computer-use, which ships no environment/Dockerfile.
func TestTasksCheckOnHarborExamples(t *testing.T) {
	rep := conformance.Report{Root: filepath.Join(harborTasks, "harbor-examples")}
	checkConformance(&rep)
	var errs []string
	for _, p := range rep.Problems {
		if p.Severity == conformance.Error {
			errs = append(errs, p.Task+": "+p.Message)
		}
	}
	want := []string{"hello-computer-use: missing", "hello-cuda: task needs 1 GPU(s)",
		"hello-multi-step-bat: hoh does not run environment.os = windows", "hello-world-bat: hoh does not run environment.os = windows"}
	if len(errs) != len(want) {
		t.Errorf("errors:\n%s", strings.Join(errs, "\n"))
	}
	for i := range want {
		if i < len(errs) && !strings.HasPrefix(errs[i], want[i]) {
			t.Errorf("error %d: %s, want %s...", i, errs[i], want[i])
		}
	}
}
