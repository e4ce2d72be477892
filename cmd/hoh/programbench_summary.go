package main

import (
	"fmt"
	"io"
	"sort"

	"github.com/hoh-research/hoh/adapters/benchmark/programbench"
	"github.com/hoh-research/hoh/analysis/results"
	"github.com/hoh-research/hoh/runrecord"
)

// writeProgramBenchSummaries prints upstream's two aggregates of the
// ProgramBench records in set, per configuration and arm
// (programbench.PaperSummaries, the toy instance excluded): over every
// instance of the checkout with a missing one counting 0 (the
// leaderboard's), and over the attempted ones. Repetitions of a task are
// averaged first. Without a checkout only the second can be computed.
func writeProgramBenchSummaries(w io.Writer, set *results.Set, checkout string) error {
	type key struct {
		config string
		arm    runrecord.Arm
	}
	sums := map[key]map[string][]float64{}
	for r := range set.All() {
		if r.Benchmark != programbench.Name || r.Metric != "pass_rate" {
			continue
		}
		k := key{r.Config, r.Arm()}
		if sums[k] == nil {
			sums[k] = map[string][]float64{}
		}
		sums[k][r.Task] = append(sums[k][r.Task], r.Value)
	}
	if len(sums) == 0 {
		return nil
	}
	var all []string
	if checkout != "" {
		tasks, err := programbench.Kind.List(checkout)
		if err != nil {
			return fmt.Errorf("--programbench: %w", err)
		}
		for _, t := range tasks {
			all = append(all, t.ID)
		}
	}
	keys := make([]key, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].config != keys[j].config {
			return keys[i].config < keys[j].config
		}
		return keys[i].arm.String() < keys[j].arm.String()
	})
	fmt.Fprintln(w, "\nProgramBench as upstream aggregates it (toy instances excluded; repetitions averaged per instance):")
	for _, k := range keys {
		rates := map[string]float64{}
		var attempted []string
		for task, vs := range sums[k] {
			s := 0.0
			for _, v := range vs {
				s += v
			}
			rates[task] = s / float64(len(vs))
			attempted = append(attempted, task)
		}
		ids := all
		if ids == nil {
			ids = attempted
		}
		leaderboard, tried := programbench.PaperSummaries(ids, rates)
		fmt.Fprintf(w, "%s %s:\n", k.config, k.arm.Label())
		if checkout != "" {
			fmt.Fprintf(w, "  all instances (missing = 0): %s\n", leaderboard)
		} else {
			fmt.Fprintln(w, "  all instances (missing = 0): give --programbench CHECKOUT for the list of instances")
		}
		fmt.Fprintf(w, "  attempted:                   %s\n", tried)
		if checkout != "" {
			known := map[string]bool{}
			for _, id := range all {
				known[id] = true
			}
			for _, id := range attempted {
				if !known[id] {
					fmt.Fprintf(w, "  NOTE: %s is not an instance of %s (counted in attempted only)\n", id, checkout)
				}
			}
		}
	}
	return nil
}
