package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/hoh-research/hoh/analysis/bootstrap"
	"github.com/hoh-research/hoh/analysis/results"
	"github.com/hoh-research/hoh/analysis/roles"
	"github.com/hoh-research/hoh/analysis/statistic/registry"
	"github.com/hoh-research/hoh/analysis/tables"
	"github.com/hoh-research/hoh/internal/textsafe"
	"github.com/hoh-research/hoh/runrecord"
)

// lowGC has the garbage collector collect at 25% heap growth instead of
// 100% while a report reads --results, and returns the restore. The live
// heap is then mostly one pointer-free table of rows (runrecord.ScoreTable)
// that a collection does not scan, so the extra collections cost a few ms
// while peak memory stays near the live heap instead of twice it (2M rows:
// about a third less, no measurable CPU). A GOGC in the environment wins.
func lowGC() func() {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(25)
	return func() { debug.SetGCPercent(old) }
}

func init() {
	register("report", "print a table: report "+strings.Join(tables.Names, "|")+" [--results PATH...] [--format text|markdown|latex|csv]; report roles --results RUNDIR: what each role of a role-team factorial contributes", runReport)
}

// reportOptions are hoh report's table name and flags.
type reportOptions struct {
	name                                  string
	resultPaths                           multiFlag
	format, config, statistics            string
	pbCheckout, interval                  string
	allowUnequal, withoutReplaced, strict bool
}

func runReport(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "roles" {
		return runReportRoles(args[1:], stdout, stderr)
	}
	o, err := parseReportFlags(args, stderr)
	if err != nil {
		return err
	}
	cfg, err := reportConfig(o, stdout, stderr)
	if err != nil {
		return err
	}
	if len(o.resultPaths) > 0 {
		defer lowGC()()
	}
	if len(o.resultPaths) == 0 {
		if o.withoutReplaced {
			return fmt.Errorf("%w: --without-replaced needs --results run directories", errUsage)
		}
		return tables.Run(o.name, cfg, nil, o.format, stdout)
	}
	return reportResults(o, cfg, stdout, stderr)
}

// parseReportFlags reads hoh report's table name and flags.
func parseReportFlags(args []string, stderr io.Writer) (reportOptions, error) {
	var o reportOptions
	fs := newFlags("report", stderr)
	fs.Var(&o.resultPaths, "results", "result files or folders in the record format (repeatable); default: the paper's per-task data")
	fs.StringVar(&o.format, "format", "text", "output format: text, markdown, latex or csv")
	fs.StringVar(&o.config, "config", "", "table config YAML (default: configs/paper/NAME.yaml as embedded in the binary)")
	fs.StringVar(&o.statistics, "statistics", "", "comma-separated statistics to add as columns of Tables 2 and 3 ("+strings.Join(registry.Names(), ", ")+")")
	fs.BoolVar(&o.allowUnequal, "allow-unequal-tasks", false, "compare arms even when they cover different tasks (tables from --results; said under the table)")
	fs.BoolVar(&o.withoutReplaced, "without-replaced", false, "drop tasks with a trial whose attempt was replaced after an infrastructure failure (unless a later run's attempt came through clean), from every arm (needs --results run directories)")
	fs.StringVar(&o.pbCheckout, "programbench", "", "ProgramBench checkout: with --results holding programbench records, print upstream's aggregate over all its instances (a missing one counting 0) besides the one over the attempted ones")
	fs.StringVar(&o.interval, "interval", "", "paired CI of the comparisons: percentile (the paper's; default unless the config says) or t (t-interval on the paired differences, right coverage at small n: docs/analysis.md#intervals)")
	fs.BoolVar(&o.strict, "strict", false, "with --results folders: a CSV file that is not a score file (listed on stderr with the reason) is an error")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: hoh report %s [flags]\n", strings.Join(tables.Names, "|"))
		fs.PrintDefaults()
	}
	name, err := parseNamed(fs, args)
	if err != nil {
		return o, err
	}
	if name == "" {
		fs.Usage()
		return o, fmt.Errorf("%w: which table? (%s)", errUsage, strings.Join(tables.Names, ", "))
	}
	o.name = name
	return o, nil
}

// reportConfig is the table's config (--config, else the paper's) with
// the flags applied; it warns first when the results are a scripted run's.
func reportConfig(o reportOptions, stdout, stderr io.Writer) (tables.Config, error) {
	var cfg tables.Config
	var err error
	if o.config != "" {
		cfg, err = tables.LoadConfig(o.config)
	} else {
		cfg, err = tables.PaperConfig(o.name) // embedded in the binary: works from any directory
	}
	if err != nil {
		return cfg, err
	}
	if o.format == "text" || o.format == "markdown" {
		warnScripted(stdout, o.resultPaths)
	} else {
		warnScripted(stderr, o.resultPaths)
	}
	cfg.AllowUnequalTasks = o.allowUnequal
	if o.interval != "" {
		if err := bootstrap.CheckMethod(o.interval); err != nil {
			return cfg, fmt.Errorf("%w: --interval: %v", errUsage, err)
		}
		cfg.Bootstrap.Interval = o.interval
	}
	if o.statistics != "" {
		if cfg, err = cfg.WithStatistics(strings.Split(o.statistics, ",")); err != nil {
			return cfg, fmt.Errorf("%w: --statistics: %v", errUsage, err)
		}
	}
	return cfg, nil
}

// reportResults prints the table of the --results records, then the role
// teams and ProgramBench aggregates under it.
func reportResults(o reportOptions, cfg tables.Config, stdout, stderr io.Writer) error {
	resultPaths := o.resultPaths
	set, err := results.LoadWith(results.Options{Skipped: stderr, Strict: o.strict}, resultPaths...)
	if err != nil {
		if len(resultPaths) > 1 && strings.Contains(err.Error(), "appears twice") {
			// Two runs of one configuration hold the same trials: that is a comparison.
			return fmt.Errorf("%w\nto compare runs of the same configuration side by side, each under its own label: hoh compare %s",
				err, strings.Join(resultPaths, " "))
		}
		return err
	}
	if o.withoutReplaced {
		var dropped int
		if set, dropped, err = withoutReplacedTrials(set, resultPaths); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "without replaced trials: %d task(s) with a replaced trial dropped from every arm of their configuration\n", dropped)
	}
	if err := tables.Report(o.name, cfg, set, nil, o.format, stdout); err != nil {
		return err
	}
	// The aggregates are text: under a text or markdown table, else on stderr.
	w := stdout
	if o.format != "text" && o.format != "markdown" {
		w = stderr
	}
	if err := writeTeams(w, set, resultPaths); err != nil {
		return err
	}
	return writeProgramBenchSummaries(w, set, o.pbCheckout)
}

// writeTeams spells out each role team among the table's configurations
// (a table's row names only the label): who played each role, from the
// runs' trial summaries.
func writeTeams(w io.Writer, set *results.Set, paths []string) error {
	shown := map[string]bool{}
	for r := range set.All() {
		shown[r.Config] = true
	}
	var lines []string
	for _, p := range paths {
		if _, err := os.Stat(runrecord.RunLayout{Dir: p}.Lock()); err != nil {
			continue // a score file, or a folder that is no run
		}
		teams, err := roles.TeamsOf(p)
		if err != nil {
			return err
		}
		labels := slices.Sorted(maps.Keys(teams))
		for _, label := range labels {
			if !shown[label] {
				continue
			}
			for _, team := range teams[label] {
				lines = append(lines, fmt.Sprintf("  %s: %s", textsafe.Term(label), textsafe.Term(team)))
			}
		}
	}
	if len(lines) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nRole teams (who played each role; docs/roles.md):")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	return nil
}

// withoutReplacedTrials drops every task that had a
// replaced trial (runs' replacements.jsonl; rows name their trial in source)
// from all arms of its configuration, so paired comparisons stay paired.
func withoutReplacedTrials(set *results.Set, paths []string) (*results.Set, int, error) {
	replaced := map[string]bool{}
	for _, p := range paths {
		reps, err := runrecord.ReadReplacements(runrecord.RunLayout{Dir: p}.Replacements())
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", p, err)
		}
		for _, r := range reps {
			// A replacement superseded by a later clean attempt says
			// nothing about the result.
			if !r.Superseded {
				replaced[r.Key] = true
			}
		}
	}
	type configTask struct{ benchmark, config, task string }
	drop := map[configTask]bool{}
	for r := range set.All() {
		if replaced[r.Source] {
			drop[configTask{r.Benchmark, r.Config, r.Task}] = true
		}
	}
	kept, err := results.NewSet(set.Filter(func(r runrecord.Row) bool { return !drop[configTask{r.Benchmark, r.Config, r.Task}] }))
	return kept, len(drop), err
}
