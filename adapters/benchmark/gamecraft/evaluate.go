package gamecraft

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/runrecord"
)

// Breakdown is the verifier's /logs/verifier/breakdown.json. Fields hoh does
// not interpret stay in Evaluation.Details through the raw JSON.
type Breakdown struct {
	Reward       float64                `json:"reward"`
	Formula      string                 `json:"formula"`
	BuildOK      flexBool               `json:"build_ok"`
	Requirements []BreakdownRequirement `json:"requirements"`
}

// BreakdownRequirement is one requirement's judged scores.
type BreakdownRequirement struct {
	ID         string   `json:"id"`
	Agg        string   `json:"agg"`
	Aggregated float64  `json:"aggregated"`
	PerDemo    perDemos `json:"per_demo"`
}

// flexBool accepts true/false or 0/1.
type flexBool bool

func (b *flexBool) UnmarshalJSON(data []byte) error {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	switch x := v.(type) {
	case bool:
		*b = flexBool(x)
	case float64:
		*b = x != 0
	case nil:
		*b = false
	default:
		return fmt.Errorf("build_ok: want a boolean or 0/1, got %s", data)
	}
	return nil
}

// perDemos accepts per_demo as a list of numbers, a list of objects with a
// "score", or an object mapping demo names to numbers.
type perDemos []float64

func (p *perDemos) UnmarshalJSON(data []byte) error {
	var nums []float64
	if err := json.Unmarshal(data, &nums); err == nil {
		*p = nums
		return nil
	}
	var objs []struct {
		Score *float64 `json:"score"`
	}
	if err := json.Unmarshal(data, &objs); err == nil {
		out := make([]float64, len(objs))
		for i, o := range objs {
			if o.Score == nil {
				return fmt.Errorf("per_demo[%d] has no score", i)
			}
			out[i] = *o.Score
		}
		*p = out
		return nil
	}
	var byDemo map[string]float64
	if err := json.Unmarshal(data, &byDemo); err == nil {
		keys := make([]string, 0, len(byDemo))
		for k := range byDemo {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make([]float64, len(keys))
		for i, k := range keys {
			out[i] = byDemo[k]
		}
		*p = out
		return nil
	}
	return fmt.Errorf("per_demo: want numbers, [{score}] or {demo: number}, got %.80s", data)
}

// aggregate combines per-demo scores by a requirement's agg (max or mean);
// no demos give 0.
func aggregate(agg string, perDemo []float64) (float64, error) {
	if len(perDemo) == 0 {
		return 0, nil
	}
	switch agg {
	case "max":
		m := perDemo[0]
		for _, v := range perDemo[1:] {
			m = math.Max(m, v)
		}
		return m, nil
	case "mean":
		s := 0.0
		for _, v := range perDemo {
			s += v
		}
		return s / float64(len(perDemo)), nil
	}
	return 0, fmt.Errorf("unknown agg %q", agg)
}

const scoreTolerance = 1e-6

// scoreBreakdown scores a verifier breakdown.json with the task's rubric:
// per-requirement aggregated scores -> the task's formula with BUILD from
// build_ok -> clamp to [0,1]. Metrics are on the 0-100 scale (build is 0/1,
// reward 0-1). Disagreements with the file's own reward or per-demo scores are
// listed in Evaluation.Error; an unreadable file is a returned error.
func scoreBreakdown(td *TaskData, data []byte) (runrecord.Evaluation, error) {
	var bd Breakdown
	if err := json.Unmarshal(data, &bd); err != nil {
		return runrecord.Evaluation{}, fmt.Errorf("breakdown.json for %s: %w", td.Task.ID, err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		return runrecord.Evaluation{}, fmt.Errorf("breakdown.json for %s: %w", td.Task.ID, err)
	}
	var problems []string
	given := map[string]BreakdownRequirement{}
	for _, q := range bd.Requirements {
		given[q.ID] = q
	}
	build := 0.0
	if bd.BuildOK {
		build = 1
	}
	vars := map[string]float64{"BUILD": build}
	sums := map[string]float64{}
	counts := map[string]int{}
	for _, q := range td.Rubric.Requirements {
		got, ok := given[q.ID]
		if !ok {
			problems = append(problems, fmt.Sprintf("requirement %s is missing from breakdown.json (scored 0)", q.ID))
		} else {
			if got.Agg != "" && got.Agg != q.Agg {
				problems = append(problems, fmt.Sprintf("requirement %s: breakdown agg %q, rubric agg %q", q.ID, got.Agg, q.Agg))
			}
			re, err := aggregate(q.Agg, got.PerDemo)
			if err == nil && math.Abs(re-got.Aggregated) > scoreTolerance {
				problems = append(problems, fmt.Sprintf("requirement %s: aggregated %.6g but %s over per_demo %v gives %.6g",
					q.ID, got.Aggregated, q.Agg, []float64(got.PerDemo), re))
			}
		}
		vars[q.ID] = got.Aggregated
		l, _ := categoryLetter(q.ID)
		sums[l] += got.Aggregated
		counts[l]++
	}
	for _, q := range bd.Requirements {
		if _, ok := vars[q.ID]; !ok {
			problems = append(problems, fmt.Sprintf("breakdown.json has requirement %s, which the rubric lacks", q.ID))
		}
	}
	value, err := td.Formula.Eval(vars)
	if err != nil {
		return runrecord.Evaluation{}, fmt.Errorf("score_formula of %s: %w", td.Task.ID, err)
	}
	reward := math.Min(1, math.Max(0, value))
	if math.Abs(reward-bd.Reward) > scoreTolerance {
		problems = append(problems, fmt.Sprintf("reward mismatch: breakdown.json says %.6g, the rubric formula gives %.6g", bd.Reward, reward))
	}
	mean := func(l string) float64 {
		if counts[l] == 0 {
			return 0
		}
		return sums[l] / float64(counts[l])
	}
	ev := runrecord.Evaluation{
		Metrics: map[string]float64{
			"overall":   100 * reward,
			"reward":    reward,
			"mechanics": 100 * mean("M"),
			"depth":     100 * mean("D"),
			"visuals":   100 * mean("V"),
			"art":       100 * mean("A"),
			"build":     build,
		},
		Details: map[string]any{"breakdown": raw},
	}
	if len(problems) > 0 {
		ev.Error = "breakdown.json disagrees with the rubric: " + strings.Join(problems, "; ")
	}
	return ev, nil
}

// BreakdownFile is the verifier's score file name.
const BreakdownFile = "breakdown.json"

// Evaluate runs the task's own verifier when Options.Verifier is set and
// scores its breakdown.json; otherwise it reads one found through
// Options.VerifierOutput. Without it the task cannot be scored here: the
// build gate runs if Godot 4 is present, the score is 0 and Error says why.
func (b *Benchmark) Evaluate(ctx context.Context, t benchmark.Task, dir string) (runrecord.Evaluation, error) {
	td, err := b.lookup(t)
	if err != nil {
		return runrecord.Evaluation{}, err
	}
	if b.Opts.Verifier != nil {
		return b.verify(ctx, td, dir)
	}
	if b.Opts.VerifierOutput != nil {
		vdir := b.Opts.VerifierOutput(t, dir)
		if vdir != "" {
			if inside(dir, vdir) {
				return runrecord.Evaluation{}, fmt.Errorf("gamecraft: verifier output %s lies inside the agent workspace %s", vdir, dir)
			}
			data, err := os.ReadFile(filepath.Join(vdir, BreakdownFile))
			if err == nil {
				return scoreBreakdown(td, data)
			}
			if !errors.Is(err, os.ErrNotExist) {
				return runrecord.Evaluation{}, err
			}
		}
	}
	zero := runrecord.Evaluation{Metrics: map[string]float64{
		"overall": 0, "reward": 0, "mechanics": 0, "depth": 0, "visuals": 0, "art": 0, "build": 0,
	}}
	check := b.buildCheck(ctx, dir)
	zero.Details = map[string]any{"build_check": check}
	switch {
	case check.Unavailable:
		zero.Error = godotMissing + "; with no verifier breakdown.json the task cannot be scored (score 0 per the build gate)"
	case !check.Passed:
		zero.Error = fmt.Sprintf("build gate failed (exit %d): score 0", check.ExitCode)
	default:
		zero.Metrics["build"] = 1
		zero.Error = "build gate passed, but there is no verifier breakdown.json (the multimodal judge is not available here): the task cannot be scored, score 0"
	}
	return zero, nil
}

// inside reports whether path is dir or below it.
func inside(dir, path string) bool {
	d, err1 := filepath.Abs(dir)
	p, err2 := filepath.Abs(path)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(d, p)
	return err == nil && (rel == "." || !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && rel != "..")
}

// Rescore implements benchmark.Rescorer: the checkpoint's kept
// breakdown.json scored again with the task's rubric.
func (b *Benchmark) Rescore(t benchmark.Task, outputDir string, _ runrecord.Evaluation) (runrecord.Evaluation, error) {
	td, err := b.lookup(t)
	if err != nil {
		return runrecord.Evaluation{}, err
	}
	data, err := os.ReadFile(filepath.Join(outputDir, BreakdownFile))
	if errors.Is(err, os.ErrNotExist) {
		return runrecord.Evaluation{}, fmt.Errorf("%w: %s has no %s", benchmark.ErrNoEvaluatorOutput, outputDir, BreakdownFile)
	}
	if err != nil {
		return runrecord.Evaluation{}, err
	}
	return scoreBreakdown(td, data)
}
