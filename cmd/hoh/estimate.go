package main

import (
	"fmt"
	"io"
	"math/big"
	"strings"
	"text/tabwriter"
	"time"

	hoh "github.com/hoh-research/hoh"
	"github.com/hoh-research/hoh/analysis/estimate"
	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/plan"
	"github.com/hoh-research/hoh/runrecord"
)

// printEstimate says what the planned trials (of the shard) will spend:
// from the pilot run directories, the run's own output (a resumed run's
// finished trials are the best pilot and are not run again), else the
// paper's per-task tokens; docs/planning.md.
//
// It returns, when the budget's point estimate falls short of the plan,
// what the budget will reach (budgetReach), which hoh run refuses to start
// unless told.
func printEstimate(w io.Writer, p *plan.Plan, shard plan.Shard, pilots []string) (short string, err error) {
	e := p.Experiment
	finished := finishedTrials(e.Output)
	if len(finished) > 0 {
		pilots = append(pilots, e.Output)
	}
	in, err := estimateInput(p, pilots)
	if err != nil {
		return "", err
	}
	skipped := 0
	var toRun []plan.Trial
	for _, t := range p.Select(shard) {
		if finished[t.Key] {
			skipped++
			continue
		}
		in.Trials = append(in.Trials, estimate.Planned{Config: t.Config, Arm: t.Arm, Serves: runrecord.ServedArms(t.Arm, t.Arms)})
		toRun = append(toRun, t)
	}
	fmt.Fprintln(w)
	if len(in.Trials) == 0 {
		fmt.Fprintf(w, "estimate: nothing left to run (%d trial(s) finished in %s)\n", skipped, e.Output)
		return "", nil
	}
	est, err := estimate.Run(in, estimate.Options{Seed: 1})
	if err != nil {
		return "", err
	}
	fmt.Fprintf(w, "Estimate of what the %d trial(s) to run will spend (point, then the %.0f%% interval of %d simulated runs; method: docs/planning.md)\n",
		est.Trials, 100*est.Level, est.Sims)
	if skipped > 0 {
		fmt.Fprintf(w, "%d trial(s) already finished in %s are not run again and not counted\n", skipped, e.Output)
	}
	printEstimateGroups(w, est)
	printEstimateRun(w, e, est)
	short = budgetReach(toRun, est, e.Budget.Tokens, e.BudgetUSD())
	if short != "" {
		fmt.Fprintf(w, "WARNING: %s\n", short)
	}
	return short, nil
}

// finishedTrials are the keys of the trials a resumed run in output has
// already finished (done or failed); empty for a new run.
func finishedTrials(output string) map[string]bool {
	finished := map[string]bool{}
	if rp, err := runrecord.ReadRunProgress(output); err == nil {
		for _, t := range rp.Trials {
			if t.State == runrecord.StateDone || t.State == runrecord.StateFailed {
				finished[t.Trial.Key] = true
			}
		}
	}
	return finished
}

// estimateInput is the estimate's input but its trials: each
// configuration's concurrency and prices, and where a configuration and
// arm's per-trial spend comes from (the pilots, else the paper).
func estimateInput(p *plan.Plan, pilots []string) (estimate.Input, error) {
	e := p.Experiment
	var pilot *estimate.Pilot
	if len(pilots) > 0 {
		var err error
		if pilot, err = estimate.LoadPilot(pilots...); err != nil {
			return estimate.Input{}, err
		}
	}
	prior, err := estimate.PaperPrior(hoh.Paper)
	if err != nil {
		return estimate.Input{}, err
	}
	bench := p.Bench.Name()
	paperConfig := map[string]bool{}
	in := estimate.Input{
		Concurrency:       e.Concurrency,
		ConfigConcurrency: map[string]int{},
		Prices:            map[string]runrecord.Price{},
		RolePrices:        map[string]map[runrecord.Role]runrecord.Price{},
		Source: func(config string, arm runrecord.Arm) *estimate.Source {
			if pilot != nil {
				if s := pilot.Source(config, arm); s != nil {
					return s
				}
			}
			return prior.Source(bench, paperConfig[config], arm)
		},
	}
	for _, c := range e.Configs {
		paperConfig[c.Label] = c.Harness == "codex" && c.Provider.Model == "gpt-5.5" && c.Provider.ReasoningEffort == "high"
		in.ConfigConcurrency[c.Label] = c.Concurrency
		if price, ok := e.PriceOf(c.Label); ok {
			in.Prices[c.Label] = price
		} else if rp := rolePrices(e, c); rp != nil {
			in.RolePrices[c.Label] = rp
		}
	}
	return in, nil
}

// printEstimateGroups prints the estimate's table, one row per
// configuration and arm, with the numbered notes on its sources and a
// team's dollars by role.
func printEstimateGroups(w io.Writer, est *estimate.Estimate) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "config\tarm\ttrials\ttokens\tUSD\ttime per trial\tfrom")
	var notes []string
	noteNumber := map[string]int{}
	for _, g := range est.Groups {
		arm := g.Arm.String()
		if len(g.Serves) > 1 {
			arm += " (serves " + joinArms(g.Serves) + ")"
		}
		from := "unknown: no pilot trial of this configuration and arm"
		if g.Source != nil {
			from = g.Source.What
			if n := g.Source.Note; n != "" {
				if noteNumber[n] == 0 {
					notes = append(notes, n)
					noteNumber[n] = len(notes)
				}
				from += fmt.Sprintf(" [%d]", noteNumber[n])
			}
		}
		usd := fmtUSDRange(g.USD)
		if !g.Priced {
			usd = "unknown (no price)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", g.Config, arm, g.Trials, fmtRange(g.Tokens, fmtTokens), usd, fmtRange(g.Time, fmtSeconds), from)
	}
	tw.Flush()
	for i, n := range notes {
		fmt.Fprintf(w, "  [%d] %s\n", i+1, n)
	}
	for _, g := range est.Groups {
		if len(g.RoleUSD) > 0 {
			fmt.Fprintf(w, "  %s %s USD by role: %s\n", g.Config, g.Arm, fmtRoleUSD(g.RoleUSD))
		}
	}
}

// printEstimateRun prints the whole run's totals and what they mean: the
// times, bounds from paper data, and budgets below the interval.
func printEstimateRun(w io.Writer, e *config.Experiment, est *estimate.Estimate) {
	fmt.Fprintf(w, "run: tokens %s, USD %s, wall time %s at concurrency %d\n",
		fmtRange(est.Tokens, fmtTokens), fmtUSDRange(est.USD), fmtRange(est.Wall, fmtSeconds), e.Concurrency)
	if !est.Wall.Known {
		fmt.Fprintln(w, "  wall time needs a pilot run (the paper prints no per-trial durations)")
	} else {
		fmt.Fprintln(w, "  "+timeMeaning(est.Groups))
	}
	if est.USD.Bounds {
		fmt.Fprintln(w, "  USD from paper data are bounds: every token at the cheapest rate to every token at the dearest (the paper gives no input/cached/output split)")
	}
	if b := e.Budget.Tokens; b > 0 && est.Tokens.Known && est.Tokens.Hi > float64(b) {
		fmt.Fprintf(w, "  the token budget (%s) is below the interval's upper end: the run may stop starting trials before the plan ends\n", fmtTokens(float64(b)))
	}
	if b := e.BudgetUSD(); b != nil && est.USD.Known {
		if f, _ := b.Float64(); est.USD.Hi > f {
			fmt.Fprintf(w, "  the dollar budget ($%s) is below the interval's upper end: the run may stop starting trials before the plan ends\n", runrecord.FormatUSD(b))
		}
	}
}

// timeMeaning says what the times count: whole trials' wall time (the
// CLIs' and hoh's own work) where the pilot's records have phase timings,
// else only the role invocations'.
func timeMeaning(groups []estimate.Group) string {
	var partial []string
	timed := 0
	for _, g := range groups {
		if g.Time.Known {
			timed++
			if !g.WallTime {
				partial = append(partial, g.String())
			}
		}
	}
	switch {
	case len(partial) == 0:
		return "time is whole trials' wall time from the pilot's phase timings: the CLIs' and hoh's own work (set-up, views, digests, commits, checks, evaluation) included"
	case len(partial) == timed:
		return "time is the role invocations' (the pilot's records have no phase timings): evaluation and hoh's own work come on top"
	}
	return "time is whole trials' wall time from the pilot's phase timings, but only the role invocations' for " + strings.Join(partial, ", ") +
		" (records without phase timings): their evaluation and hoh's own work come on top"
}

// budgetReach says, when a budget's point estimate is below the plan's,
// which tasks the budget reaches: trials start task by task
// (plan.StartOrder) and a task that started gets every arm, so the tasks
// before the budget runs out get every arm and the others none. "" when
// the budget reaches every trial or the estimate cannot tell.
func budgetReach(trials []plan.Trial, est *estimate.Estimate, tokens int64, usd *big.Rat) string {
	type configArm struct {
		config string
		arm    runrecord.Arm
	}
	perTrial := map[configArm]estimate.Group{}
	for _, g := range est.Groups {
		perTrial[configArm{g.Config, g.Arm}] = g
	}
	cost := func(t plan.Trial, dollars bool) (float64, bool) {
		g, ok := perTrial[configArm{t.Config, t.Arm}]
		r := g.Tokens
		if dollars {
			r = g.USD
		}
		if !ok || !r.Known || g.Trials == 0 {
			return 0, false
		}
		return r.Point / float64(g.Trials), true
	}
	limit, dollars, what := float64(tokens), false, "token budget "+fmtTokens(float64(tokens))
	switch {
	case tokens > 0:
	case usd != nil:
		f, _ := usd.Float64()
		limit, dollars, what = f, true, "dollar budget $"+runrecord.FormatUSD(usd)
	default:
		return ""
	}
	spent, reached := 0.0, map[plan.TaskGroup]bool{}
	var order []plan.TaskGroup
	for _, i := range plan.StartOrder(trials) {
		t := trials[i]
		g := t.GroupOf()
		if !reached[g] && spent >= limit {
			continue // not started: the budget is spent before this task
		}
		if !reached[g] {
			reached[g] = true
			order = append(order, g)
		}
		c, ok := cost(t, dollars)
		if !ok {
			return ""
		}
		spent += c
	}
	total := map[plan.TaskGroup]bool{}
	for _, t := range trials {
		total[t.GroupOf()] = true
	}
	if len(reached) == len(total) {
		return ""
	}
	var names []string
	for _, g := range order {
		names = append(names, fmt.Sprintf("%s (rep %d)", g.Task, g.Rep))
	}
	if len(names) > 8 {
		names = append(names[:8], "...")
	}
	return fmt.Sprintf("the %s cannot reach every arm of every task (point estimate): trials start task by task and a task "+
		"that starts gets every arm, so about %d of %d task repetition(s) get every configuration and arm (%s) and the other %d none; "+
		"raise the budget, select fewer tasks or conditions, or run anyway with hoh run --allow-short-budget",
		what, len(reached), len(total), strings.Join(names, ", "), len(total)-len(reached))
}

func fmtRange(r estimate.Range, f func(float64) string) string {
	if !r.Known {
		return "unknown"
	}
	if r.Lo == r.Hi {
		return f(r.Point)
	}
	return fmt.Sprintf("%s [%s, %s]", f(r.Point), f(r.Lo), f(r.Hi))
}

func fmtUSDRange(r estimate.Range) string {
	if r.Known && r.Bounds {
		return fmt.Sprintf("%s to %s (bounds)", fmtUSD(r.Lo), fmtUSD(r.Hi))
	}
	return fmtRange(r, fmtUSD)
}

func fmtTokens(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.3gB", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3gk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func fmtUSD(v float64) string {
	if v >= 1 {
		return fmt.Sprintf("$%.2f", v)
	}
	return fmt.Sprintf("$%.3g", v)
}

func fmtSeconds(s float64) string {
	d := time.Duration(s * float64(time.Second))
	switch {
	case d >= 24*time.Hour:
		return fmt.Sprintf("%dd%dh", d/(24*time.Hour), d%(24*time.Hour)/time.Hour)
	case d >= time.Hour:
		return d.Round(time.Minute).String()
	case d >= time.Minute:
		return d.Round(time.Second).String()
	}
	return d.Round(100 * time.Millisecond).String()
}

// joinArms lists arms as the config names them: "vanilla, vanilla-continuation@3".
func joinArms(arms []runrecord.Arm) string {
	names := make([]string, len(arms))
	for i, a := range arms {
		names[i] = a.String()
	}
	return strings.Join(names, ", ")
}

// rolePrices are a role team's prices per role, nil unless every role's
// model is priced.
func rolePrices(e *config.Experiment, c config.HarnessModel) map[runrecord.Role]runrecord.Price {
	if !c.HasTeam() {
		return nil
	}
	out := map[runrecord.Role]runrecord.Price{}
	for _, role := range runrecord.Roles {
		p, ok := e.PriceOfRole(c.Label, role)
		if !ok {
			return nil
		}
		out[role] = p
	}
	return out
}

// fmtRoleUSD is a team's dollars per role, in the roles' order.
func fmtRoleUSD(byRole map[runrecord.Role]float64) string {
	var parts []string
	for _, role := range runrecord.Roles {
		if v, ok := byRole[role]; ok {
			parts = append(parts, fmt.Sprintf("%s %s", role.Display(), fmtUSD(v)))
		}
	}
	return strings.Join(parts, ", ")
}
