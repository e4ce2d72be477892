package tables

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hoh-research/hoh/analysis/metrics"
	"github.com/hoh-research/hoh/analysis/paper"
	"github.com/hoh-research/hoh/runrecord"
)

// Tables built from the user's own records (--results) take their shape from
// the data, not from the paper config:
//   - configurations: those present, paper configs in paper order first, then
//     the others sorted;
//   - arms: Table 1 the table's arms present plus every hoh@t; Table 2 also
//     every vanilla-continuation@k; Table 3 each ablation at its final
//     checkpoint T present, followed by its baseline hoh@T;
//   - benchmarks: Table 1 keeps its fixed column groups for the paper's
//     benchmarks present and adds "<benchmark> mean <metric>" for any other;
//     Tables 2 and 3 (score per token) cover the benchmarks whose records
//     carry tokens, or every benchmark present when none do;
//   - the Dominance pool is every config x arm pair present.

// benchMetric is one benchmark reported by its primary metric.
type benchMetric struct {
	bench, metric string
	tasks         int
}

// primaryMetrics are tried in order after the benchmark's own primary metric
// (adapters/benchmark's reporting table); a benchmark with none of them must
// have exactly one metric.
var primaryMetrics = []string{"overall", "reward", "pass_rate"}

var paperBenchmarks = []string{"gamecraft", "frontierswe", "programbench"}

// conditionRank orders arms the way the paper's tables list them.
var conditionRank = map[string]int{runrecord.Vanilla: 0, runrecord.VanillaContinuation: 1, runrecord.HoH: 2,
	runrecord.WithoutPlanUpdate: 3, runrecord.WithoutEvidence: 4, runrecord.WithoutWarmStart: 5}

var ablations = []string{runrecord.WithoutPlanUpdate, runrecord.WithoutEvidence, runrecord.WithoutWarmStart}

// vanilla is the Vanilla arm (one pass).
var vanilla = runrecord.Arm{Condition: runrecord.Vanilla, Checkpoint: 1}

func sortArms(arms []runrecord.Arm) {
	rank := func(a runrecord.Arm) int {
		if r, ok := conditionRank[a.Condition]; ok {
			return r
		}
		return len(conditionRank)
	}
	sort.SliceStable(arms, func(i, j int) bool {
		a, b := arms[i], arms[j]
		if rank(a) != rank(b) {
			return rank(a) < rank(b)
		}
		if a.Condition != b.Condition {
			return a.Condition < b.Condition
		}
		return a.Checkpoint < b.Checkpoint
	})
}

// layout is what adapt decides beyond the Spec fields.
type layout struct {
	benches   []benchMetric                   // benchmarks present with their primary metric
	baselines map[runrecord.Arm]runrecord.Arm // Table 3: ablation arm -> hoh@T of the same T
	// finalOf is Table 1's gain arm per configuration, its own final
	// hoh@T, when configurations end at different checkpoints.
	finalOf map[string]runrecord.Arm
}

// armOf keys what is known per arm of a configuration or a benchmark.
type armOf struct {
	of  string
	arm runrecord.Arm
}

// armNames lists arms as records write them.
func armNames(arms []runrecord.Arm) []string {
	out := make([]string, len(arms))
	for i, a := range arms {
		out[i] = a.String()
	}
	return out
}

// contents summarizes what a set of records holds, for choosing a shape and
// for the error when nothing fits.
type contents struct {
	benches, configs []string
	arms             []runrecord.Arm
	has              map[armOf]bool  // config, arm
	benchArm         map[armOf]bool  // benchmark, arm
	tokens           map[string]bool // benchmark -> some row carries tokens
}

func survey(ix *metrics.Index) contents {
	c := contents{has: map[armOf]bool{}, benchArm: map[armOf]bool{}, tokens: map[string]bool{}}
	seen := map[string]bool{}
	add := func(list *[]string, kind, v string) {
		if !seen[kind+"\x00"+v] {
			seen[kind+"\x00"+v] = true
			*list = append(*list, v)
		}
	}
	seenArm := map[runrecord.Arm]bool{}
	for _, s := range ix.Selectors() {
		a := s.Arm
		add(&c.benches, "b", s.Benchmark)
		add(&c.configs, "c", s.Config)
		if !seenArm[a] {
			seenArm[a] = true
			c.arms = append(c.arms, a)
		}
		c.has[armOf{s.Config, a}] = true
		c.benchArm[armOf{s.Benchmark, a}] = true
	}
	for _, b := range ix.TokenBenchmarks() {
		c.tokens[b] = true
	}
	sort.Strings(c.benches)
	sort.Strings(c.configs)
	sortArms(c.arms)
	return c
}

func (c contents) String() string {
	none := func(xs []string) string {
		if len(xs) == 0 {
			return "none"
		}
		return strings.Join(xs, ", ")
	}
	return fmt.Sprintf("benchmarks [%s], configs [%s], arms [%s]", none(c.benches), none(c.configs), none(armNames(c.arms)))
}

// orderConfigs puts paper configs first in paper order, then the rest sorted.
func orderConfigs(configs []string) []string {
	present := map[string]bool{}
	for _, c := range configs {
		present[c] = true
	}
	var out []string
	for _, c := range paper.Configs {
		if present[c] {
			out = append(out, c)
			delete(present, c)
		}
	}
	var rest []string
	for c := range present {
		rest = append(rest, c)
	}
	sort.Strings(rest)
	return append(out, rest...)
}

func orderBenches(benches []string) []string {
	var out []string
	present := map[string]bool{}
	for _, b := range benches {
		present[b] = true
	}
	for _, b := range paperBenchmarks {
		if present[b] {
			out = append(out, b)
			delete(present, b)
		}
	}
	var rest []string
	for b := range present {
		rest = append(rest, b)
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// primary picks a benchmark's metric among the rows of the given arms and
// counts its tasks.
func primary(ix *metrics.Index, bench string, arms map[runrecord.Arm]bool) (benchMetric, error) {
	metrics := map[string]map[string]bool{}
	for _, s := range ix.Selectors() {
		if s.Benchmark != bench || !arms[s.Arm] {
			continue
		}
		if metrics[s.Metric] == nil {
			metrics[s.Metric] = map[string]bool{}
		}
		for _, t := range ix.TaskNames(s) {
			metrics[s.Metric][t] = true
		}
	}
	// The benchmark's registered primary metric first, then the generic order.
	r, _ := runrecord.ReportingOf(bench)
	for _, m := range append([]string{r.PrimaryMetric}, primaryMetrics...) {
		if tasks, ok := metrics[m]; ok {
			return benchMetric{bench, m, len(tasks)}, nil
		}
	}
	if len(metrics) == 1 {
		for m, tasks := range metrics {
			return benchMetric{bench, m, len(tasks)}, nil
		}
	}
	var names []string
	for m := range metrics {
		names = append(names, m)
	}
	sort.Strings(names)
	return benchMetric{}, fmt.Errorf("benchmark %s has metrics %s but none of %s to report it by",
		bench, strings.Join(names, ", "), strings.Join(primaryMetrics, ", "))
}

// adapt reshapes a table's spec to the records: see the comment at the top of
// this file. It fails with what the table needs and what the records hold
// when no row fits the table.
func adapt(name string, s Spec, ix *metrics.Index) (Spec, layout, error) {
	var lay layout
	c := survey(ix)
	var arms []runrecord.Arm
	var need string
	switch name {
	case "table1", "table2":
		arms, need = mainArms(name, &s, &lay, c)
	case "table3":
		arms, need = ablationArms(&s, &lay, c)
	default:
		return s, lay, fmt.Errorf("tables: %s is not built from records", name)
	}
	if len(arms) == 0 {
		return s, lay, fmt.Errorf("tables: %s needs %s; the records hold %s", name, need, c)
	}
	s.Arms = arms
	s.Compare = nil
	for _, a := range arms {
		if a != s.Vanilla {
			s.Compare = append(s.Compare, a)
		}
	}
	armSet := map[runrecord.Arm]bool{}
	for _, a := range arms {
		armSet[a] = true
	}
	if name != "table1" && !armSet[s.Vanilla] && slices.Contains(c.arms, s.Vanilla) {
		armSet[s.Vanilla] = true // eta is taken against Vanilla
	}
	var configs []string
	for _, cfg := range c.configs {
		for _, a := range arms {
			if c.has[armOf{cfg, a}] {
				configs = append(configs, cfg)
				break
			}
		}
	}
	s.Configs = orderConfigs(configs)
	s.Pool = Pool{Configs: s.Configs, Arms: arms}

	var benches []string
	for _, b := range c.benches {
		for _, a := range arms {
			if c.benchArm[armOf{b, a}] {
				benches = append(benches, b)
				break
			}
		}
	}
	if name != "table1" {
		var withTokens []string
		for _, b := range benches {
			if c.tokens[b] {
				withTokens = append(withTokens, b)
			}
		}
		if len(withTokens) > 0 {
			benches = withTokens
		}
	}
	for _, b := range orderBenches(benches) {
		bm, err := primary(ix, b, armSet)
		if err != nil {
			return s, lay, fmt.Errorf("tables: %s: %w", name, err)
		}
		lay.benches = append(lay.benches, bm)
	}
	s.Title = recordTitles[name]
	return s, lay, nil
}

// mainArms is the arms of Table 1 or 2 the records hold (and those of the
// spec), setting the spec's gain arm and, for Table 1, each configuration's
// own final arm where they differ; need says which arms fit.
func mainArms(name string, s *Spec, lay *layout, c contents) (arms []runrecord.Arm, need string) {
	inSpec := map[runrecord.Arm]bool{}
	for _, a := range s.Arms {
		inSpec[a] = true
	}
	need = "vanilla or hoh@t arms"
	conds := map[string]bool{runrecord.HoH: true}
	if name == "table2" {
		need = "vanilla, vanilla-continuation@k or hoh@t arms"
		conds[runrecord.VanillaContinuation] = true
	}
	for _, a := range c.arms {
		if inSpec[a] || conds[a.Condition] {
			arms = append(arms, a)
		}
	}
	s.GainArms = nil
	if name == "table1" {
		var final runrecord.Arm
		for _, a := range arms {
			if a.Condition == runrecord.HoH {
				final = a // sorted: the last is the final loop
			}
		}
		if !final.IsZero() {
			s.GainArms = []runrecord.Arm{final}
		}
		// Ragged final checkpoints: each configuration's gain at its own
		// final T (said under the table), never an empty cell.
		lay.finalOf = map[string]runrecord.Arm{}
		ragged := false
		for _, cfg := range c.configs {
			for _, a := range arms {
				if a.Condition == runrecord.HoH && c.has[armOf{cfg, a}] {
					lay.finalOf[cfg] = a
				}
			}
			if f, ok := lay.finalOf[cfg]; ok && f != final {
				ragged = true
			}
		}
		if !ragged {
			lay.finalOf = nil
		}
	}
	s.Baseline = runrecord.Arm{}
	return arms, need
}

// ablationArms is the arms of Table 3 the records hold: each ablation at
// its final checkpoint with HoH at that checkpoint as its baseline; need
// says which arms fit.
func ablationArms(s *Spec, lay *layout, c contents) (arms []runrecord.Arm, need string) {
	need = "ablation arms (" + strings.Join(ablations, "@T, ") + "@T)"
	final := map[string]int{}
	for _, p := range c.arms {
		if contains(ablations, p.Condition) && p.Checkpoint > final[p.Condition] {
			final[p.Condition] = p.Checkpoint
		}
	}
	var ts []int
	for _, t := range final {
		if !containsInt(ts, t) {
			ts = append(ts, t)
		}
	}
	sort.Ints(ts)
	lay.baselines = map[runrecord.Arm]runrecord.Arm{}
	for _, t := range ts {
		base := runrecord.Arm{Condition: runrecord.HoH, Checkpoint: t}
		for _, cond := range ablations {
			if final[cond] == t {
				a := runrecord.Arm{Condition: cond, Checkpoint: t}
				arms = append(arms, a)
				lay.baselines[a] = base
			}
		}
		if slices.Contains(c.arms, base) {
			arms = append(arms, base)
			lay.baselines[base] = base
		}
	}
	if len(final) == 0 {
		arms = nil
	}
	s.Baseline = runrecord.Arm{}
	return arms, need
}

var recordTitles = map[string]string{
	"table1": "Main results from the given records (paper Table 1 layout)",
	"table2": "HoH vs repeated Vanilla development from the given records (paper Table 2 layout)",
	"table3": "Ablation study from the given records (paper Table 3 layout)",
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// taskSpecs shapes the per-task tables for the user's own records: one
// table per benchmark and configuration present, its arms as columns (in the
// paper's order), its primary metric per task, a Mean row, and a Delta
// column of the last HoH checkpoint minus Vanilla when both are present.
func taskSpecs(ix *metrics.Index) ([]Spec, error) {
	c := survey(ix)
	chosen := map[string]benchMetric{}
	armsOf := map[[2]string][]runrecord.Arm{} // benchmark, config -> arms, in order of appearance
	for _, s := range ix.Selectors() {
		k := [2]string{s.Benchmark, s.Config}
		armsOf[k] = append(armsOf[k], s.Arm)
	}
	var specs []Spec
	for _, bench := range orderBenches(c.benches) {
		for _, config := range orderConfigs(c.configs) {
			arms := map[runrecord.Arm]bool{}
			var list []runrecord.Arm
			for _, a := range armsOf[[2]string{bench, config}] {
				if !arms[a] {
					arms[a] = true
					list = append(list, a)
				}
			}
			if len(list) == 0 {
				continue
			}
			sortArms(list)
			// Configurations mostly share their arms: choose once per arm set.
			key := bench + "\x00" + strings.Join(armNames(list), ",")
			bm, ok := chosen[key]
			if !ok {
				var err error
				if bm, err = primary(ix, bench, arms); err != nil {
					return nil, fmt.Errorf("tables: tasks: %w", err)
				}
				chosen[key] = bm
			}
			s := Spec{Name: "tasks", Benchmark: bench, Configs: []string{config}, Arms: list, Metric: bm.metric,
				Vanilla: vanilla,
				Title:   fmt.Sprintf("%s per-task %s, %s (from the given records)", bench, bm.metric, configLabel(config))}
			lastHoH := 0
			for _, a := range list {
				if a.Condition == runrecord.HoH && a.Checkpoint > lastHoH {
					lastHoH = a.Checkpoint
				}
			}
			if arms[vanilla] && lastHoH > 0 {
				s.Delta = runrecord.Arm{Condition: runrecord.HoH, Checkpoint: lastHoH}
			}
			for _, a := range list {
				if a != vanilla && arms[vanilla] {
					s.Compare = append(s.Compare, a)
				}
			}
			specs = append(specs, s)
		}
	}
	if len(specs) == 0 {
		return nil, fmt.Errorf("tables: tasks: the records hold no rows")
	}
	return specs, nil
}
