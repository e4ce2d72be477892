package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/hoh-research/hoh/analysis/metrics"
	"github.com/hoh-research/hoh/analysis/power"
	"github.com/hoh-research/hoh/analysis/results"
	"github.com/hoh-research/hoh/analysis/tables"
	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/runrecord"
)

func init() {
	register("plan", "plan an experiment: plan power --effect D [--pilot RECORDS] (tasks and repetitions to detect D)", runPlan)
}

// planOptions are hoh plan power's flags.
type planOptions struct {
	pilots                               multiFlag
	effect, alpha, tolerance, target     float64
	interval                             string
	bench, config, arm, baseline, metric string
	reps                                 string
	sims                                 int
	seed                                 uint64
	design                               string
}

func runPlan(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "power" {
		fmt.Fprintln(stderr, "Usage: hoh plan power --effect D [--pilot RECORDS...] [--alpha 0.05] [--power 0.8] [flags]")
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return flag.ErrHelp
		}
		return fmt.Errorf("%w: plan what? (power)", errUsage)
	}
	o, err := parsePlanFlags(args[1:], stderr)
	if err != nil {
		return err
	}
	return planPower(o, stdout, stderr)
}

// parsePlanFlags reads hoh plan power's flags, refusing an effect, alpha
// or power it cannot plan for.
func parsePlanFlags(args []string, stderr io.Writer) (planOptions, error) {
	var o planOptions
	fs := newFlags("plan power", stderr)
	fs.Var(&o.pilots, "pilot", "pilot result files or folders in the record format (repeatable); default: the paper's per-task data as a prior")
	fs.Float64Var(&o.effect, "effect", 0, "mean difference to detect, in the metric's units (required)")
	fs.Float64Var(&o.alpha, "alpha", 0.05, "1 - the confidence level of the paired CI")
	fs.StringVar(&o.interval, "interval", power.Percentile, "the CI the plan is for: percentile (paired percentile bootstrap, the paper's) or t (t-interval on the paired differences)")
	fs.Float64Var(&o.tolerance, "tolerance", 0.005, "Monte Carlo standard error sought for the power near the answer")
	fs.Float64Var(&o.target, "power", 0.8, "probability that the CI excludes 0")
	fs.StringVar(&o.bench, "benchmark", "", "benchmark (default: the only one in the pilot; gamecraft for the paper data)")
	fs.StringVar(&o.config, "config", "", "configuration (default: the only one in the pilot; the first paper config for the paper data)")
	fs.StringVar(&o.arm, "arm", "", "treated arm (default: hoh at its last checkpoint)")
	fs.StringVar(&o.baseline, "baseline", "vanilla", "baseline arm")
	fs.StringVar(&o.metric, "metric", "", "metric (default: the benchmark's primary metric)")
	fs.StringVar(&o.reps, "reps", "", "comma-separated repetition counts to plan for (default: 1,2,3 when the pilot has repetitions, else the pilot's)")
	fs.IntVar(&o.sims, "sims", 200000, "most simulated studies per design (the tolerance usually stops sooner)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the simulation")
	fs.StringVar(&o.design, "design", "", "experiment config (a factorial design's too): also print the trials each planned point means for its configurations and conditions")
	if err := parseFlags(fs, args); err != nil {
		return o, err
	}
	if err := noExtra(fs, 0); err != nil {
		return o, err
	}
	if o.effect == 0 || math.IsNaN(o.effect) {
		return o, fmt.Errorf("%w: --effect D is required (nonzero)", errUsage)
	}
	if o.alpha <= 0 || o.alpha >= 1 || o.target <= 0 || o.target >= 1 {
		return o, fmt.Errorf("%w: --alpha and --power must lie in (0, 1)", errUsage)
	}
	return o, nil
}

// planPower plans the tasks and repetitions that detect the effect, from
// the pilot records or the paper's data.
func planPower(o planOptions, stdout, stderr io.Writer) error {
	set, from, err := loadPlanPilot(o.pilots)
	if err != nil {
		return err
	}
	ix := metrics.NewSetIndex(set)
	sel, err := choosePilot(ix, len(o.pilots) == 0, o.bench, o.config, o.arm, o.metric)
	if err != nil {
		return err
	}
	base := sel
	if base.Arm, err = runrecord.ParseArm(o.baseline); err != nil {
		return fmt.Errorf("%w: --baseline: %v", errUsage, err)
	}
	pilot, err := power.FromRecords(ix, sel, base)
	if err != nil {
		return err
	}
	opt := power.Options{Effect: o.effect, Alpha: o.alpha, Power: o.target, Interval: o.interval, Tolerance: o.tolerance, MaxSims: o.sims, Seed: o.seed}
	if o.reps != "" {
		if opt.Reps, err = planReps(o.reps, pilot); err != nil {
			return err
		}
	}
	plan, err := power.Solve(pilot, opt)
	if err != nil {
		return err
	}
	printPowerPlan(stdout, stderr, plan, pilot, planHeader{sel: sel, base: base, from: from, tasks: benchmarkTasks(ix, sel.Benchmark, len(o.pilots) == 0), tolerance: o.tolerance})
	if o.design != "" {
		return printDesignSize(stdout, o.design, plan)
	}
	return nil
}

// loadPlanPilot loads the pilot records, or without any the paper's
// per-task data as a prior; from says which, for the plan's header.
func loadPlanPilot(pilots []string) (set *results.Set, from string, err error) {
	from = "the paper's per-task data (a prior)"
	if len(pilots) > 0 {
		set, err = results.Load(pilots...)
		from = "pilot " + strings.Join(pilots, ", ")
	} else {
		var cfg tables.Config
		if cfg, err = tables.PaperConfig("table1"); err == nil {
			set, err = cfg.LoadResults(cfg.Spec)
		}
	}
	if err != nil {
		return nil, "", err
	}
	return set, from, nil
}

// planReps parses --reps; other repetition counts than the pilot's need
// its within-task variance, unknown with one repetition per task.
func planReps(repsFlag string, pilot power.Pilot) ([]int, error) {
	var reps []int
	for _, s := range strings.Split(repsFlag, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || k < 1 {
			return nil, fmt.Errorf("%w: --reps %q: want positive integers", errUsage, s)
		}
		reps = append(reps, k)
	}
	if math.IsNaN(pilot.Within) && (len(reps) > 1 || reps[0] != max(1, pilot.Reps)) {
		return nil, fmt.Errorf("the pilot has one repetition per task, so its within-task variance is unknown: repetitions cannot be planned (run a pilot with 2 or more repetitions)")
	}
	return reps, nil
}

// printDesignSize says what each planned point costs in trials for a
// config's design: every configuration (each team of a factorial) runs
// every condition on the planned tasks and repetitions.
func printDesignSize(stdout io.Writer, file string, plan *power.Plan) error {
	exp, err := config.LoadOffline(file)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("%d configuration(s)", len(exp.Configs))
	if f := exp.Factorial; f != nil {
		what += fmt.Sprintf(" (%d the teams of its factorial design)", len(f.Teams()))
	}
	fmt.Fprintf(stdout, "Design %s: %s x %d condition(s)\n", file, what, len(exp.Conditions))
	for _, p := range plan.Points {
		if p.Tasks > 0 {
			fmt.Fprintf(stdout, "  %d repetition(s), %d tasks: %d trials\n", p.Reps, p.Tasks, p.Reps*p.Tasks*len(exp.Configs)*len(exp.Conditions))
		}
	}
	return nil
}

type planHeader struct {
	sel, base metrics.Selector
	from      string
	tasks     int // tasks the benchmark has (0: unknown)
	tolerance float64
}

func printPowerPlan(stdout, stderr io.Writer, plan *power.Plan, pilot power.Pilot, h planHeader) {
	reps := fmt.Sprintf("%d repetition(s) each", pilot.Reps)
	if pilot.RepsMin > 0 && pilot.RepsMin != pilot.Reps {
		reps = fmt.Sprintf("%d to %d repetitions (mean %.2f; each task's own count is used)", pilot.RepsMin, pilot.Reps, pilot.RepsMean)
	}
	fmt.Fprintf(stdout, "Power plan: %s %s %s vs %s, metric %s; from %s: %d tasks, %s\n",
		h.sel.Benchmark, h.sel.Config, h.sel.Arm, h.base.Arm, h.sel.Metric, h.from, len(pilot.Diffs), reps)
	test := "paired percentile bootstrap CI (ideal bootstrap, saddlepoint approximation)"
	if plan.Interval == power.TInterval {
		test = "t-interval on the paired differences"
	}
	fmt.Fprintf(stdout, "Effect %g, %g%% %s excluding 0 with power %g\n", plan.Effect, 100*(1-plan.Alpha), test, plan.Target)
	within := "unknown (one repetition per task: the plan keeps the pilot's repetitions)"
	if !math.IsNaN(plan.Within) {
		within = strconv.FormatFloat(plan.Within, 'g', 4, 64)
	}
	fmt.Fprintf(stdout, "Between-task variance %s, within-task variance of one repetition %s\n", strconv.FormatFloat(plan.Between, 'g', 4, 64), within)
	fmt.Fprintf(stdout, "%-5s %-7s %-40s %s\n", "reps", "tasks", "power at tasks", "power at tasks-1")
	for i, p := range plan.Points {
		if p.Tasks == 0 {
			fmt.Fprintf(stdout, "%-5d %-7s not reached within 1000 tasks\n", p.Reps, "-")
			continue
		}
		below := "-"
		if b := plan.Below[i]; b.Sims > 0 {
			below = fmt.Sprintf("%.3f ± %.3f", b.Power, b.SE)
		}
		fmt.Fprintf(stdout, "%-5d %-7d %-40s %s\n", p.Reps, p.Tasks, fmt.Sprintf("%.3f ± %.3f (%d studies)", p.Power, p.SE, p.Sims), below)
		if p.SE > h.tolerance {
			fmt.Fprintf(stderr, "warning: %d repetition(s): the Monte Carlo SE %.4f is above the tolerance %g (raise --sims)\n", p.Reps, p.SE, h.tolerance)
		}
		if h.tasks > 0 && p.Tasks > h.tasks {
			fmt.Fprintf(stderr, "warning: %d repetition(s): the plan needs %d tasks but %s has %d; more repetitions, a larger effect or another benchmark\n", p.Reps, p.Tasks, h.sel.Benchmark, h.tasks)
		}
	}
	fmt.Fprintln(stdout, "tasks: the smallest number whose power's one-sided 95% lower bound reaches the target; ± is the Monte Carlo SE")
	if pilot.Variance() == 0 {
		fmt.Fprintf(stderr, "warning: the pilot's %d task differences are all equal (variance 0): the simulated studies cannot vary, so the plan says nothing; run a pilot on more tasks\n", len(pilot.Diffs))
	} else if plan.Between == 0 {
		fmt.Fprintln(stderr, "warning: the between-task variance is estimated at 0 (the pilot's differences vary no more than its repetition noise): the plan is optimistic; run a pilot on more tasks")
	}
	if len(pilot.Diffs) < 5 {
		fmt.Fprintf(stderr, "warning: a pilot of %d tasks says little about the spread of task differences\n", len(pilot.Diffs))
	}
	fmt.Fprintln(stdout, "Method and assumptions: docs/planning.md")
}

// benchmarkTasks is the number of tasks the benchmark has, known for the
// paper's benchmarks (from its per-task data); 0 when unknown.
func benchmarkTasks(ix *metrics.Index, bench string, paperData bool) int {
	if !paperData {
		cfg, err := tables.PaperConfig("table1")
		if err != nil {
			return 0
		}
		set, err := cfg.LoadResults(cfg.Spec)
		if err != nil {
			return 0
		}
		ix = metrics.NewSetIndex(set)
	}
	return len(ix.TaskFirstRows(bench))
}

// choosePilot picks the treated series: the named or only benchmark and
// configuration, hoh at its last checkpoint, the primary metric.
func choosePilot(ix *metrics.Index, paperData bool, bench, config, arm, metric string) (metrics.Selector, error) {
	var benches, configs []string
	seenB, seenC := map[string]bool{}, map[string]bool{}
	last := map[string]int{} // bench|config -> last hoh checkpoint
	for _, s := range ix.Selectors() {
		if !seenB[s.Benchmark] {
			seenB[s.Benchmark] = true
			benches = append(benches, s.Benchmark)
		}
		if (bench == "" || s.Benchmark == bench) && !seenC[s.Config] {
			seenC[s.Config] = true
			configs = append(configs, s.Config)
		}
		if s.Arm.Condition == runrecord.HoH {
			k := s.Benchmark + "|" + s.Config
			last[k] = max(last[k], s.Arm.Checkpoint)
		}
	}
	sort.Strings(benches)
	pick := func(what, given string, have []string, paperDefault string) (string, error) {
		switch {
		case given != "":
			for _, h := range have {
				if h == given {
					return given, nil
				}
			}
			return "", fmt.Errorf("%w: --%s %s: the pilot has %s", errUsage, what, given, strings.Join(have, ", "))
		case len(have) == 1:
			return have[0], nil
		case paperData && paperDefault != "":
			return paperDefault, nil
		}
		return "", fmt.Errorf("%w: the pilot has several: name one with --%s (%s)", errUsage, what, strings.Join(have, ", "))
	}
	b, err := pick("benchmark", bench, benches, "gamecraft")
	if err != nil {
		return metrics.Selector{}, err
	}
	first := ""
	if len(configs) > 0 {
		first = configs[0]
	}
	c, err := pick("config", config, configs, first)
	if err != nil {
		return metrics.Selector{}, err
	}
	sel := metrics.Selector{Benchmark: b, Config: c, Metric: metric}
	if sel.Metric == "" {
		rep, _ := runrecord.ReportingOf(b)
		sel.Metric = rep.PrimaryMetric
		if sel.Metric == "" {
			var have []string
			seen := map[string]bool{}
			for _, s := range ix.Selectors() {
				if s.Benchmark == b && s.Config == c && !seen[s.Metric] {
					seen[s.Metric] = true
					have = append(have, s.Metric)
				}
			}
			sort.Strings(have)
			return metrics.Selector{}, fmt.Errorf("%w: hoh does not know benchmark %s's primary metric: name one with --metric (the pilot has %s)", errUsage, b, strings.Join(have, ", "))
		}
	}
	if arm == "" {
		cp := last[b+"|"+c]
		if cp == 0 {
			return metrics.Selector{}, fmt.Errorf("%w: %s %s has no hoh arm: name one with --arm", errUsage, b, c)
		}
		arm = fmt.Sprintf("hoh@%d", cp)
	}
	if sel.Arm, err = runrecord.ParseArm(arm); err != nil {
		return metrics.Selector{}, fmt.Errorf("%w: --arm: %v", errUsage, err)
	}
	if !ix.Has(sel) {
		return metrics.Selector{}, fmt.Errorf("the pilot has no rows for %s", sel)
	}
	return sel, nil
}
