package harbor

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hoh-research/hoh/runrecord"
)

// Harbor's multi_step_reward_strategy values: "mean" (the default) takes
// per-key means over the steps that produced a reward, a key a step lacks
// counting 0; "final" takes the last step's reward as it is.
const (
	StrategyMean  = "mean"
	StrategyFinal = "final"
)

// MinReward is a step's min_reward: a number gates the "reward" key, a
// table gates each key it names (a missing key fails it).
type MinReward map[string]float64

// UnmarshalTOML implements toml.Unmarshaler.
func (m *MinReward) UnmarshalTOML(v any) error {
	num := func(x any) (float64, bool) {
		switch n := x.(type) {
		case int64:
			return float64(n), true
		case float64:
			return n, true
		}
		return 0, false
	}
	if n, ok := num(v); ok {
		*m = MinReward{"reward": n}
		return nil
	}
	tbl, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("min_reward: want a number or a table of numbers, got %T", v)
	}
	*m = MinReward{}
	for k, x := range tbl {
		n, ok := num(x)
		if !ok {
			return fmt.Errorf("min_reward.%s: want a number, got %T", k, x)
		}
		(*m)[k] = n
	}
	return nil
}

// stepDir is steps/<name> of the task folder dir.
func stepDir(dir, name string) string { return filepath.Join(dir, "steps", name) }

// validateSteps checks what Harbor requires of [[steps]]: unique names,
// each with steps/<name>/instruction.md, and a known reward strategy.
func validateSteps(dir string, f TaskFile) error {
	if len(f.Steps) == 0 {
		return nil
	}
	switch f.MultiStepRewardStrategy {
	case "", StrategyMean, StrategyFinal:
	default:
		return fmt.Errorf("multi_step_reward_strategy %q: want %q or %q", f.MultiStepRewardStrategy, StrategyMean, StrategyFinal)
	}
	seen := map[string]bool{}
	for i, s := range f.Steps {
		if s.Name == "" || strings.ContainsAny(s.Name, `/\`) || s.Name == "." || s.Name == ".." {
			return fmt.Errorf("steps[%d].name %q is not a folder name", i, s.Name)
		}
		if seen[s.Name] {
			return fmt.Errorf("steps[%d].name %q appears twice", i, s.Name)
		}
		seen[s.Name] = true
		p := filepath.Join(stepDir(dir, s.Name), "instruction.md")
		if b, err := os.ReadFile(p); err != nil || strings.TrimSpace(string(b)) == "" {
			return fmt.Errorf("step %s: %s is missing or empty", s.Name, p)
		}
	}
	return nil
}

// ForStep is task.toml as step i runs it (Harbor's fallbacks): each key of
// [steps.agent] and [steps.verifier] over the task's [agent] and
// [verifier] ([steps.verifier.env] over [verifier.env]), the step's
// artifacts after the task's; the verifier reads its tests from the step.
func (f TaskFile) ForStep(i int) TaskFile {
	s := f.Steps[i]
	out := f
	out.step = s.Name
	a, sa := &out.Agent, s.Agent
	if sa.TimeoutSec != nil {
		a.TimeoutSec = sa.TimeoutSec
	}
	if sa.User != "" {
		a.User = sa.User
	}
	if sa.NetworkMode != "" || len(sa.AllowedHosts) > 0 {
		a.NetworkMode, a.AllowedHosts = sa.NetworkMode, sa.AllowedHosts
	}
	v, sv := &out.Verifier, s.Verifier
	if sv.TimeoutSec != nil {
		v.TimeoutSec = sv.TimeoutSec
	}
	if sv.User != "" {
		v.User = sv.User
	}
	if sv.EnvironmentMode != "" || sv.Environment != nil {
		v.EnvironmentMode, v.Environment = sv.EnvironmentMode, sv.Environment
	}
	if sv.NetworkMode != "" || len(sv.AllowedHosts) > 0 {
		v.NetworkMode, v.AllowedHosts = sv.NetworkMode, sv.AllowedHosts
	}
	v.Env = map[string]string{}
	for _, m := range []map[string]string{f.Verifier.Env, sv.Env} {
		for k, x := range m {
			v.Env[k] = x
		}
	}
	out.Artifacts = append(append([]any(nil), f.Artifacts...), s.Artifacts...)
	return out
}

// testsSources are the folders a verifier gets at /tests, in order, later
// ones overriding: tests/, then for a step its steps/<name>/tests/.
func testsSources(dir string, f TaskFile) []string {
	out := []string{filepath.Join(dir, "tests")}
	if f.step == "" {
		return out
	}
	if _, err := os.Stat(out[0]); err != nil {
		out = nil
	}
	if st := filepath.Join(stepDir(dir, f.step), "tests"); dirExists(st) {
		out = append(out, st)
	}
	return out
}

// verifierContext is where a separate verifier's image is built from: the
// step's tests/ when it has one, else the task's tests/.
func verifierContext(dir string, f TaskFile) string {
	if f.step != "" {
		if st := filepath.Join(stepDir(dir, f.step), "tests"); dirExists(st) {
			return st
		}
	}
	return filepath.Join(dir, "tests")
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// stepVerifier is the test.sh step name's verifier runs: its own, else the
// task's tests/test.sh ("" when neither exists).
func stepVerifier(dir, name string) string {
	for _, p := range []string{filepath.Join(stepDir(dir, name), "tests", "test.sh"), filepath.Join(dir, "tests", "test.sh")} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// stepGate is step s's min_reward gate on the evaluation of the artifact
// it hands on: no reward at all stops the steps after it (Harbor: a step
// that failed without a verifier result), and so does a gated key below
// its threshold or missing.
func stepGate(s Step) func(runrecord.Evaluation) string {
	return func(ev runrecord.Evaluation) string {
		if ev.Error != "" {
			return fmt.Sprintf("step %s gave no reward (%s)", s.Name, ev.Error)
		}
		keys := make([]string, 0, len(s.MinReward))
		for k := range s.MinReward {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			got, ok := ev.Metrics[k]
			if !ok {
				got = math.Inf(-1)
			}
			if got < s.MinReward[k] {
				return fmt.Sprintf("step %s: %s = %g is below its min_reward %g", s.Name, k, got, s.MinReward[k])
			}
		}
		return ""
	}
}

// stepsReward is Harbor's trial reward of a multi-step task from the
// evaluations of the steps that ran (strategy mean or final).
func stepsReward(strategy string, evs []runrecord.Evaluation) runrecord.Evaluation {
	out := runrecord.Evaluation{Metrics: map[string]float64{}, Details: map[string]any{"multi_step_reward_strategy": strategy}}
	if strategy == "" {
		out.Details["multi_step_reward_strategy"] = StrategyMean
	}
	var valid []runrecord.Evaluation
	for _, ev := range evs {
		if ev.Error == "" {
			valid = append(valid, ev)
		}
	}
	if strategy == StrategyFinal && len(evs) > 0 {
		valid = nil
		if last := evs[len(evs)-1]; last.Error == "" {
			valid = []runrecord.Evaluation{last}
		}
	}
	if len(valid) == 0 {
		out.Metrics["reward"] = 0 // Harbor's rule: no reward, score 0
		out.Error = "no step that counts produced a reward"
		return out
	}
	for _, ev := range valid {
		for k, x := range ev.Metrics {
			out.Metrics[k] += x / float64(len(valid))
		}
	}
	if _, ok := out.Metrics["reward"]; !ok {
		out.Metrics["reward"] = 0
	}
	return out
}

// stepContext is what HoH's roles read before step i's instruction: the
// step list (the later steps by name only, as Harbor's agent never sees
// their instructions) and the instructions of the steps already done.
func stepContext(f TaskFile, i int, instructions []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "This task is a sequence of %d steps, done in order in one environment: each step starts from what the earlier ones left, and its own verifier checks it when it ends.\n\n", len(f.Steps))
	for j, s := range f.Steps {
		state := "done"
		switch {
		case j == i:
			state = "this step"
		case j > i:
			state = "later"
		}
		fmt.Fprintf(&b, "%d. %s (%s)\n", j+1, s.Name, state)
	}
	for j := 0; j < i; j++ {
		fmt.Fprintf(&b, "\n## Step %d (%s), done: its instruction was\n\n%s\n", j+1, f.Steps[j].Name, strings.TrimSpace(instructions[j]))
	}
	fmt.Fprintf(&b, "\n## Step %d (%s): this step's instruction\n\n", i+1, f.Steps[i].Name)
	return b.String()
}

// stepImagesAvailable makes each step's separate verifier docker_image
// present at plan time, as imageAvailable does the task's.
func (b *Benchmark) stepImagesAvailable(ctx context.Context, l Loaded) error {
	for i, s := range l.File.Steps {
		v := l.File.ForStep(i)
		if !separateVerifier(v.Verifier) || separateVerifier(l.File.Verifier) && s.Verifier.Environment == nil {
			continue // none, or the task's (checked there)
		}
		if vi := verifierEnvConfig(v).DockerImage; vi != "" {
			what := fmt.Sprintf("%s: steps[%d] (%s) verifier.environment.docker_image", filepath.Join(l.Task.Dir, "task.toml"), i, s.Name)
			if err := b.ensureImage(ctx, what, vi, ""); err != nil {
				return err
			}
		}
	}
	return nil
}

// stepsEnvResolvable checks each step's [steps.verifier.env] as
// EnvResolvable does the task's tables.
func (l Loaded) stepsEnvResolvable(lookup func(string) (string, bool)) error {
	for _, s := range l.File.Steps {
		if _, err := resolveEnv("steps.verifier.env", s.Verifier.Env, lookup); err != nil {
			return fmt.Errorf("%s: step %s: %w", filepath.Join(l.Task.Dir, "task.toml"), s.Name, err)
		}
	}
	return nil
}
