package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/hoh-research/hoh/experiments/runner/status"
	"github.com/hoh-research/hoh/internal/textsafe"
	"github.com/hoh-research/hoh/runrecord"
)

func init() {
	register("show", "show what happened trial by trial in a run or trial directory", showCmd)
}

// showOptions are hoh show's flags: which trials, and how much of them.
type showOptions struct {
	configs, arms, tasks, states multiFlag
	summaryOnly, timings         bool
}

func showCmd(args []string, stdout, stderr io.Writer) error {
	var o showOptions
	fs := newFlags("show", stderr)
	fs.Var(&o.configs, "config", "only trials of this configuration label (repeatable, or comma-separated)")
	fs.Var(&o.arms, "condition", "only trials of this condition, e.g. vanilla, hoh@3 (repeatable, or comma-separated)")
	fs.Var(&o.tasks, "task", "only trials of this task id (repeatable, or comma-separated)")
	fs.Var(&o.states, "state", "only trials in this state: done, failed, running, remaining, budget (repeatable)")
	fs.BoolVar(&o.summaryOnly, "summary", false, "print only the summary table, no trial details")
	fs.BoolVar(&o.timings, "timings", false, "print where the time went: the CLIs' and hoh's phases per trial, configuration and condition, and run")
	fs.Usage = func() {
		fmt.Fprintln(stderr, `Usage: hoh show [--config L] [--condition ARM] [--task ID] [--state S] [--summary] [--timings] RUN_DIR
       hoh show [--timings] TRIAL_DIR

For a run directory: a summary (trials per configuration and condition by state, tokens), then
each selected trial: its status, every stage (iteration, role, commit, tokens, attempts,
violations), its token use by role, the workspace history with each commit's diff summary,
and the checkpoint scores (evaluated after the loop; never shown to a role).
For a trial directory: that trial alone. hoh view writes the same as HTML.`)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return fmt.Errorf("%w: want one directory", errUsage)
	}
	if err := noExtra(fs, 1); err != nil {
		return err
	}
	return showDir(stdout, fs.Arg(0), o)
}

// showDir shows a trial directory, a multi-step trial's steps, or a run
// directory's summary and selected trials.
func showDir(stdout io.Writer, dir string, o showOptions) error {
	if _, err := os.Stat(runrecord.TrialLayout{Dir: dir}.Spec()); err == nil {
		if o.timings {
			return showTrialTimings(stdout, dir)
		}
		return showTrial(stdout, dir)
	}
	if ok, err := showSteps(stdout, dir); ok || err != nil {
		return err
	}
	in, err := status.Inspect(dir)
	if err != nil {
		return err
	}
	if in.Lock.Notice != "" {
		fmt.Fprintf(stdout, "NOTE: %s\n\n", in.Lock.Notice)
	}
	selected := selectTrials(in, o)
	if err := showSummary(stdout, dir, in, selected, o); err != nil {
		return err
	}
	if o.timings {
		showTimings(stdout, dir, selected)
		return nil
	}
	if o.summaryOnly {
		return nil
	}
	fmt.Fprintln(stdout)
	for _, ts := range selected {
		switch ts.State {
		case runrecord.StateRemaining, runrecord.StateBudget:
			fmt.Fprintf(stdout, "== %s (%s): %s\n\n", textsafe.Args(ts.Trial.Dir, ts.Trial.Key, ts.State)...)
			continue
		}
		if err := showAny(stdout, filepath.Join(dir, ts.Trial.Dir)); err != nil {
			fmt.Fprintf(stdout, "== %s: %v\n\n", textsafe.Args(ts.Trial.Dir, err)...)
		}
	}
	return nil
}

// selectTrials are the run's trials the flags select; a trial serving
// several arms is selected by any of them.
func selectTrials(in *status.Inspection, o showOptions) []status.TrialState {
	configs, arms, tasks, states := o.configs, o.arms, o.tasks, o.states
	keep := func(ts status.TrialState) bool {
		served := runrecord.ServedArms(ts.Trial.Arm, ts.Trial.Arms)
		return matches(configs, ts.Trial.Config) && matches(tasks, ts.Trial.Task.ID) &&
			matches(states, string(ts.State)) && slices.ContainsFunc(served, func(a runrecord.Arm) bool { return matches(arms, a.String()) })
	}
	var selected []status.TrialState
	for _, ts := range in.Trials {
		if keep(ts) {
			selected = append(selected, ts)
		}
	}
	return selected
}

// showSummary prints the run's heading and its table of the selected
// configurations' and conditions' trials by state.
func showSummary(stdout io.Writer, dir string, in *status.Inspection, selected []status.TrialState, o showOptions) error {
	configs, arms := o.configs, o.arms
	fmt.Fprintf(stdout, "run %s: experiment %s, %d trial(s)", dir, in.Lock.Experiment, len(in.Trials))
	if len(selected) != len(in.Trials) {
		fmt.Fprintf(stdout, ", %d selected", len(selected))
	}
	fmt.Fprintln(stdout)
	t := tablewriter.NewTable(stdout, tablewriter.WithHeaderAutoFormat(tw.Off))
	t.Header("Config", "Condition", "Done", "Running", "Failed", "Remaining", "Not run (budget)", "Tokens")
	for _, g := range in.Groups() {
		if matches(configs, g.Config) && matches(arms, g.Arm.String()) {
			t.Append(g.Config, g.Arm.String(), g.Done, g.Running, g.Failed, g.Remaining, g.NotRun, g.Tokens)
		}
	}
	tot := in.Total()
	t.Footer("Total (trials)", "", tot.Done, tot.Running, tot.Failed, tot.Remaining, tot.NotRun, tot.Tokens)
	return t.Render()
}

func showTrial(w io.Writer, dir string) error {
	v, err := status.ViewTrial(dir)
	if err != nil {
		return err
	}
	s := v.Spec
	fmt.Fprintf(w, "== %s (%s): %s %s %s rep %d\n", textsafe.Args(dir, s.Key, s.Config, s.Arm, s.Task, s.Rep)...)
	switch {
	case v.Summary != nil:
		fmt.Fprintf(w, "status: %s %s\n", v.Summary.Status, textsafe.Term(v.Summary.Reason))
		for _, e := range v.Summary.Extensions {
			fmt.Fprintf(w, "extended: %s -> %s (%s)\n", e.FromArm, e.ToArm, e.Time.Format(time.RFC3339))
		}
	case v.Failure != nil:
		fmt.Fprintf(w, "runner gave up: %s\n", textsafe.Term(v.Failure.Reason))
	default:
		fmt.Fprintln(w, "status: running or interrupted (no summary yet)")
	}
	showStages(w, v.Stages)
	if v.Summary != nil {
		showRoleTokens(w, v.Summary)
	}
	showHistory(w, v)
	if len(v.Scores) > 0 {
		fmt.Fprintln(w, "scores (evaluated after the loop; never shown to a role):")
		for _, r := range v.Scores {
			fmt.Fprintf(w, "  checkpoint %d %s = %g (cumulative tokens %g)\n", r.Checkpoint, r.Metric, r.Value, r.Tokens)
		}
	}
	fmt.Fprintln(w)
	return nil
}

// showStages lists a trial's stages: each one's role invocations,
// tokens, and what it reused or recorded, then its violations.
func showStages(w io.Writer, stages []runrecord.StageRecord) {
	fmt.Fprintln(w, "stages:")
	for _, st := range stages {
		var invs []string
		var tokens int64
		for _, inv := range st.Invocations {
			invs = append(invs, fmt.Sprintf("attempt %d %s", inv.Attempt, inv.Outcome))
			tokens += inv.Usage.Total
		}
		line := fmt.Sprintf("  iter %d %-9s commit %.10s tokens %d", st.Iteration, st.Role, st.Commit, tokens)
		if len(invs) > 0 {
			line += " [" + strings.Join(invs, ", ") + "]"
		}
		if st.ReusedFrom > 0 {
			line += fmt.Sprintf(" (D reused from iteration %d)", st.ReusedFrom)
		}
		if st.StartedFrom != "" {
			line += " (started from " + textsafe.Term(st.StartedFrom) + ")"
		}
		if st.Role == runrecord.RoleDeveloper && st.PlanFrom > 0 && st.PlanFrom != st.Iteration {
			line += fmt.Sprintf(" (got D_%d, the last valid document)", st.PlanFrom)
		}
		if st.SessionNote != "" {
			line += " (" + textsafe.Term(st.SessionNote) + ")"
		}
		if st.RoleFailure != "" {
			line += " ROLE FAILED (recorded, the loop went on): " + textsafe.Term(st.RoleFailure)
		}
		fmt.Fprintln(w, line)
		for _, viol := range st.Violations {
			fmt.Fprintf(w, "    violation: %s\n", textsafe.Term(viol))
		}
	}
}

// showRoleTokens prints a finished trial's tokens, total then by role.
func showRoleTokens(w io.Writer, sum *runrecord.Summary) {
	var roles []runrecord.Role
	for r := range sum.ByRole {
		roles = append(roles, r)
	}
	sort.Slice(roles, func(i, j int) bool { return roles[i] < roles[j] }) // by name, as shown before roles were typed
	fmt.Fprintf(w, "tokens: total %d", sum.Usage.Total)
	for _, r := range roles {
		fmt.Fprintf(w, ", %s %d", r, sum.ByRole[r].Total)
	}
	fmt.Fprintln(w)
}

// showHistory prints the trial's workspace history, each commit with its
// diff summary.
func showHistory(w io.Writer, v *status.TrialView) {
	fmt.Fprintln(w, "workspace history:")
	for _, e := range v.History {
		tags := ""
		if len(e.Tags) > 0 {
			tags = " [" + strings.Join(e.Tags, ", ") + "]"
		}
		fmt.Fprintf(w, "  %.10s %s%s\n", e.Commit, textsafe.Term(e.Subject), tags)
		if d := strings.TrimSpace(v.Diffs[e.Commit]); d != "" {
			for _, l := range strings.Split(d, "\n") {
				fmt.Fprintf(w, "      %s\n", textsafe.Term(strings.TrimSpace(l)))
			}
		}
	}
}

// matches reports whether v is among want (an empty want matches all).
func matches(want []string, v string) bool { return len(want) == 0 || slices.Contains(want, v) }
