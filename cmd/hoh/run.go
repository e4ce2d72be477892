package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"golang.org/x/term"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/plan"
	"github.com/hoh-research/hoh/experiments/preflight"
	"github.com/hoh-research/hoh/experiments/runner"
	"github.com/hoh-research/hoh/experiments/runner/status"
	"github.com/hoh-research/hoh/runrecord"
)

func init() {
	register("run", "run (or resume) an experiment from its YAML config", runCmd)
}

// runOptions are hoh run's flags and config file, parsed and checked.
type runOptions struct {
	check, estimate       bool
	allowChanged          bool
	allowShort            bool
	shard                 plan.Shard
	output, preflightMode string
	pilots                multiFlag
	configFile            string
}

func runCmd(args []string, stdout, stderr io.Writer) error {
	o, err := parseRunFlags(args, stderr)
	if err != nil {
		return err
	}
	return runExperiment(o, args, stdout)
}

// parseRunFlags reads hoh run's command line, refusing what is wrong
// before any config is read.
func parseRunFlags(args []string, stderr io.Writer) (runOptions, error) {
	var o runOptions
	fs := newFlags("run", stderr)
	fs.BoolVar(&o.check, "check", false, "validate the config and print the plan without running")
	shardText := fs.String("shard", "", "run only shard k/N of the plan (dealt by estimated cost; a resume keeps its deal)")
	fs.StringVar(&o.output, "output", "", "run directory (overrides the config's output)")
	fs.BoolVar(&o.allowChanged, "allow-changed-config", false, "resume even though the config, tasks or harnesses changed")
	fs.BoolVar(&o.estimate, "estimate", false, "print what the planned trials will spend (tokens, dollars, wall time, with intervals) and run nothing; alone it needs no key, Docker or evaluator")
	fs.Var(&o.pilots, "pilot", "with --estimate: a finished or partial run directory of the same configurations whose trials' ledgers are the estimate's samples (repeatable; default: the run's own output, else the paper's per-task tokens)")
	fs.BoolVar(&o.allowShort, "allow-short-budget", false, "start even though the budget's estimate cannot reach every task (those it reaches get every arm)")
	fs.StringVar(&o.preflightMode, "preflight", "on", "on: before any trial, reach each endpoint and run one trivial turn of each configuration's CLI; off: skip")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: hoh run [--check] [--estimate [--pilot RUNDIR]...] [--shard k/N] [--output DIR] [--allow-changed-config] [--allow-short-budget] [--preflight on|off] CONFIG.yaml")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return o, err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return o, fmt.Errorf("%w: want exactly one config file", errUsage)
	}
	if err := noExtra(fs, 1); err != nil {
		return o, err
	}
	o.configFile = fs.Arg(0)
	var err error
	if o.shard, err = plan.ParseShard(*shardText); err != nil {
		return o, fmt.Errorf("%w: %v", errUsage, err)
	}
	if len(o.pilots) > 0 && !o.estimate {
		return o, fmt.Errorf("%w: --pilot goes with --estimate", errUsage)
	}
	return o, nil
}

// runExperiment acts on hoh run's options: an estimate, a check, or the
// run itself.
func runExperiment(o runOptions, args []string, stdout io.Writer) error {
	exp, later, err := loadRunConfig(o)
	if err != nil {
		return err
	}
	if note := splitBudget(exp, o.shard); note != "" && !o.check && !o.estimate {
		fmt.Fprintln(stdout, note)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.preflightMode != "on" && o.preflightMode != "off" {
		return fmt.Errorf("%w: --preflight must be on or off, got %q", errUsage, o.preflightMode)
	}
	if o.estimate && !o.check {
		p, err := runner.Prepare(ctx, exp, nil)
		if err != nil {
			return err
		}
		printPlan(stdout, p, o.shard)
		_, err = printEstimate(stdout, p, o.shard, o.pilots)
		return err
	}
	if !o.check {
		// Before the evaluator's and harnesses' checks: nothing else matters if the plan is refused.
		if err := refuseShortBudget(ctx, exp, o.shard, o.allowShort); err != nil {
			return err
		}
	}
	if err := evaluatorReady(ctx, exp); err != nil {
		var ps config.Problems
		if !o.check || !errors.As(err, &ps) {
			return err
		}
		later = append(later, ps...)
	}
	if o.check {
		return checkRun(ctx, exp, o, later, stdout)
	}
	return startRun(ctx, exp, o, args, stdout)
}

// loadRunConfig loads the config (offline for an estimate, which reaches
// no model) with --output applied. For --check, problems that leave the
// config usable offline come back as later, to be listed with the rest.
func loadRunConfig(o runOptions) (exp *config.Experiment, later config.Problems, err error) {
	load := config.Load
	if o.estimate && !o.check {
		load = config.LoadOffline // an estimate reaches no model
	}
	exp, err = load(o.configFile)
	// --check reports every problem at once: with only unset key variables
	// wrong, it goes on (offline) to the evaluator, tasks and harnesses and
	// lists them all at the end.
	if ps := (config.Problems{}); err != nil && o.check && errors.As(err, &ps) {
		if off, oerr := config.LoadOffline(o.configFile); oerr == nil {
			exp, err, later = off, nil, ps
		}
	}
	if err != nil {
		return nil, nil, err
	}
	if o.output != "" {
		// A flag's path is the working directory's, made absolute now like
		// the config's paths.
		if exp.Output, err = filepath.Abs(o.output); err != nil {
			return nil, nil, err
		}
	}
	return exp, later, nil
}

// checkRun is hoh run --check once the config and evaluator are checked:
// the plan, tasks and harnesses, every problem listed at once, then the
// plan and what would become of an existing run.
func checkRun(ctx context.Context, exp *config.Experiment, o runOptions, later config.Problems, stdout io.Writer) error {
	p, err := runner.Prepare(ctx, exp, nil)
	if ps := (config.Problems{}); err != nil && errors.As(err, &ps) {
		return append(later, ps...)
	}
	if err != nil {
		return joinProblems(later, err)
	}
	// What the preflight would refuse offline, too: a CLI a role's view hides.
	lines, problems := preflight.Harnesses(ctx, exp)
	err = runner.Check(ctx, p, runner.CheckOptions{InView: true, Earlier: problems})
	if ps := (config.Problems{}); errors.As(err, &ps) {
		return append(later, ps...)
	}
	if err != nil {
		return joinProblems(later, err)
	}
	if len(later) > 0 {
		return later
	}
	printPlan(stdout, p, o.shard)
	for _, l := range lines {
		fmt.Fprintln(stdout, l)
	}
	if err := checkResume(stdout, p, o.shard, o.allowChanged); err != nil {
		return err
	}
	if o.estimate {
		_, err := printEstimate(stdout, p, o.shard, o.pilots)
		return err
	}
	return nil
}

// startRun runs (or resumes) the experiment, then summarizes it; an
// interrupted run says what is kept and how to resume.
func startRun(ctx context.Context, exp *config.Experiment, o runOptions, args []string, stdout io.Writer) error {
	terminal := false
	if f, ok := stdout.(*os.File); ok {
		terminal = term.IsTerminal(int(f.Fd()))
	}
	res, err := runner.Run(ctx, exp, runner.Options{Shard: o.shard, AllowChangedConfig: o.allowChanged, Out: stdout, Terminal: terminal, Preflight: o.preflightMode == "on"})
	if res != nil {
		if serr := status.Summary(stdout, exp.Output, res.Outcomes, exp.Scripted()); serr != nil && err == nil {
			err = serr
		}
		printStops(stdout, res.Stopped)
		if exp.NoEvaluator() {
			fmt.Fprintf(stdout, "NOTE: %s\n", config.NoEvaluatorNotice)
		}
	}
	if err != nil && ctx.Err() != nil {
		// Ctrl-C or SIGTERM: say what is kept and how to go on.
		resume := resumeCommand(args)
		if res != nil {
			fmt.Fprintf(stdout, "interrupted: %d trial(s) finished (%d done, %d failed), %d not finished; every finished trial and committed stage is kept\n",
				res.Count(runrecord.StateDone)+res.Count(runrecord.StateFailed), res.Count(runrecord.StateDone), res.Count(runrecord.StateFailed),
				len(res.Outcomes)-res.Count(runrecord.StateDone)-res.Count(runrecord.StateFailed))
		}
		fmt.Fprintf(stdout, "resume with: %s\n", resume)
		return fmt.Errorf("%w; resume with: %s", errInterrupted, resume)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "records: %s (scores.csv, trials.jsonl, replacements.jsonl)\n", exp.Output)
	if n := res.Count(runrecord.StateFailed); n > 0 {
		return fmt.Errorf("%d trial(s) failed; see hoh status %s", n, exp.Output)
	}
	return nil
}

// checkResume says, for hoh run --check, whether the output directory's
// existing run would be resumed, extended or refused, as hoh run decides
// before its preflight. Harness versions the config leaves to the default
// pin are known only once the CLIs start, so the lock's are taken for them.
func checkResume(w io.Writer, p *plan.Plan, shard plan.Shard, allowChanged bool) error {
	old, err := plan.ReadLock(p.Experiment.Output)
	if err != nil {
		if os.IsNotExist(err) {
			fmt.Fprintf(w, "output %s: a new run\n", p.Experiment.Output)
			return nil
		}
		return err
	}
	cur := p.Lock
	cur.Shard = shard.String()
	cur.Harnesses = map[string]string{}
	for label, v := range p.Lock.Harnesses {
		if prev, ok := old.Harnesses[label]; ok && strings.HasSuffix(v, "@") {
			v = prev
		}
		cur.Harnesses[label] = v
	}
	notes, err := runner.ResumeCheck(p.Experiment.Output, cur, allowChanged)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "output %s: resumes the existing run (finished trials are kept)\n", p.Experiment.Output)
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	return nil
}

// resumeCommand is the command line that resumes this run: the same
// command, quoted for a POSIX shell.
func resumeCommand(args []string) string { return shellCommand(append([]string{"run"}, args...)) }

// shellCommand is this binary's command line with args, quoted for a POSIX
// shell.
func shellCommand(args []string) string {
	words := []string{os.Args[0]}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`;&|<>()*?[]#~!{}") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		words = append(words, a)
	}
	return strings.Join(words, " ")
}

func printPlan(w io.Writer, p *plan.Plan, shard plan.Shard) {
	e := p.Experiment
	fmt.Fprintf(w, "experiment %s: config OK (%s)\n", e.Name, e.File)
	for _, n := range e.Notices() {
		fmt.Fprintf(w, "NOTE: %s\n", n)
	}
	if ln, ok := p.Bench.(benchmark.LoadNotes); ok {
		for _, n := range ln.LoadNotes() {
			fmt.Fprintf(w, "NOTE: %s\n", n)
		}
	}
	trials := p.Select(shard)
	fmt.Fprintf(w, "benchmark %s, %d task(s), %d configuration(s), %d condition(s), %d repetition(s): %d trial(s)",
		p.Bench.Name(), len(p.Tasks), len(e.Configs), len(e.Conditions), e.Repetitions, len(p.Trials))
	if shard.N > 1 {
		fmt.Fprintf(w, ", %d in shard %s", len(trials), shard)
	}
	fmt.Fprintf(w, "\noutput %s, concurrency %d, token budget %d (0 = unlimited)\n", e.Output, e.Concurrency, e.Budget.Tokens)
	for _, t := range trials {
		fmt.Fprintf(w, "  %s  %s\n", t.Key, t.Dir)
	}
}

// printStops says which configurations the run stopped and why (their
// trials have no score; stops.jsonl keeps the same).
func printStops(w io.Writer, stopped map[string]string) {
	labels := make([]string, 0, len(stopped))
	for l := range stopped {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	for _, l := range labels {
		fmt.Fprintf(w, "STOPPED %s: %s\n", l, stopped[l])
	}
}

// splitBudget gives shard k of N its 1/N share of the experiment's token
// and dollar budgets (dollars to the cent, rounded down), so shards run at
// once on a cluster spend no more than the config allows together. A
// shard's trials are not known to the others, so a share is fixed rather
// than pooled. It returns the note that says so, "" when nothing changed.
func splitBudget(exp *config.Experiment, shard plan.Shard) string {
	if shard.N <= 1 || (exp.Budget.Tokens <= 0 && exp.Budget.USD == "") {
		return ""
	}
	var parts []string
	if exp.Budget.Tokens > 0 {
		share := exp.Budget.Tokens / int64(shard.N)
		parts = append(parts, fmt.Sprintf("%d of %d tokens", share, exp.Budget.Tokens))
		exp.Budget.Tokens = max(share, 1)
	}
	if b := exp.BudgetUSD(); b != nil {
		cents := new(big.Int).Quo(new(big.Int).Mul(b.Num(), big.NewInt(100)), new(big.Int).Mul(b.Denom(), big.NewInt(int64(shard.N))))
		if cents.Sign() == 0 {
			cents.SetInt64(1) // a zero budget would run nothing
		}
		share := new(big.Rat).SetFrac(cents, big.NewInt(100))
		parts = append(parts, fmt.Sprintf("$%s of $%s", runrecord.FormatUSD(share), runrecord.FormatUSD(b)))
		exp.Budget.USD = runrecord.FormatUSD(share)
	}
	return fmt.Sprintf("shard %s: budget %s (the experiment's, split evenly across %d shards)", shard, strings.Join(parts, ", "), shard.N)
}

// refuseShortBudget refuses to start a run whose budget, by the estimate
// (hoh run --estimate), cannot reach every task, unless allowed: the
// comparison the config exists for would cover only the tasks it reaches.
func refuseShortBudget(ctx context.Context, exp *config.Experiment, shard plan.Shard, allow bool) error {
	if allow || exp.Budget.Tokens <= 0 && exp.BudgetUSD() == nil {
		return nil
	}
	p, err := runner.Prepare(ctx, exp, nil)
	if err != nil {
		return err
	}
	short, err := printEstimate(io.Discard, p, shard, nil)
	if err != nil || short == "" {
		return nil // an estimate that fails is no reason to refuse: the run's own checks follow
	}
	return fmt.Errorf("refusing to start: %s (hoh run --estimate shows the estimate)", short)
}

// joinProblems reports the problems found so far before err, which
// stopped the check.
func joinProblems(ps config.Problems, err error) error {
	if len(ps) == 0 {
		return err
	}
	return fmt.Errorf("%w\nand then: %v", ps, err)
}
