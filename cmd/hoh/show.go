package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hoh-research/hoh/experiments/runner/status"
	"github.com/hoh-research/hoh/runrecord"
)

func init() {
	register("show", "show what happened trial by trial in a run or trial directory", showCmd)
}

func showCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("show", stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, "Usage: hoh show RUN_DIR|TRIAL_DIR"); fs.PrintDefaults() }
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fmt.Errorf("%w: want one directory", errUsage)
	}
	dir := fs.Arg(0)
	if _, err := os.Stat(runrecord.TrialLayout{Dir: dir}.Spec()); err == nil {
		return showTrial(stdout, dir)
	}
	in, err := status.Inspect(dir)
	if err != nil {
		return err
	}
	if in.Lock.Notice != "" {
		fmt.Fprintf(stdout, "NOTE: %s\n\n", in.Lock.Notice)
	}
	for _, ts := range in.Trials {
		switch ts.State {
		case runrecord.StateRemaining, runrecord.StateBudget:
			fmt.Fprintf(stdout, "== %s (%s): %s\n\n", ts.Trial.Dir, ts.Trial.Key, ts.State)
			continue
		}
		if err := showTrial(stdout, filepath.Join(dir, ts.Trial.Dir)); err != nil {
			fmt.Fprintf(stdout, "== %s: %v\n\n", ts.Trial.Dir, err)
		}
	}
	return nil
}

func showTrial(w io.Writer, dir string) error {
	v, err := status.ViewTrial(dir)
	if err != nil {
		return err
	}
	s := v.Spec
	fmt.Fprintf(w, "== %s (%s): %s %s %s rep %d\n", dir, s.Key, s.Config, s.Arm, s.Task, s.Rep)
	switch {
	case v.Summary != nil:
		fmt.Fprintf(w, "status: %s %s\n", v.Summary.Status, v.Summary.Reason)
		for _, e := range v.Summary.Extensions {
			fmt.Fprintf(w, "extended: %s -> %s (%s)\n", e.FromArm, e.ToArm, e.Time.Format(time.RFC3339))
		}
	case v.Failure != nil:
		fmt.Fprintf(w, "runner gave up: %s\n", v.Failure.Reason)
	default:
		fmt.Fprintln(w, "status: running or interrupted (no summary yet)")
	}
	fmt.Fprintln(w, "stages:")
	for _, st := range v.Stages {
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
			line += " (started from " + st.StartedFrom + ")"
		}
		if st.Role == "developer" && st.PlanFrom > 0 && st.PlanFrom != st.Iteration {
			line += fmt.Sprintf(" (got D_%d, the last valid document)", st.PlanFrom)
		}
		if st.SessionNote != "" {
			line += " (" + st.SessionNote + ")"
		}
		if st.RoleFailure != "" {
			line += " ROLE FAILED (recorded, the loop went on): " + st.RoleFailure
		}
		fmt.Fprintln(w, line)
		for _, viol := range st.Violations {
			fmt.Fprintf(w, "    violation: %s\n", viol)
		}
	}
	if v.Summary != nil {
		var roles []string
		for r := range v.Summary.ByRole {
			roles = append(roles, r)
		}
		sort.Strings(roles)
		fmt.Fprintf(w, "tokens: total %d", v.Summary.Usage.Total)
		for _, r := range roles {
			fmt.Fprintf(w, ", %s %d", r, v.Summary.ByRole[r].Total)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "workspace history:")
	for _, e := range v.History {
		tags := ""
		if len(e.Tags) > 0 {
			tags = " [" + strings.Join(e.Tags, ", ") + "]"
		}
		fmt.Fprintf(w, "  %.10s %s%s\n", e.Commit, e.Subject, tags)
		if d := strings.TrimSpace(v.Diffs[e.Commit]); d != "" {
			for _, l := range strings.Split(d, "\n") {
				fmt.Fprintf(w, "      %s\n", strings.TrimSpace(l))
			}
		}
	}
	if len(v.Scores) > 0 {
		fmt.Fprintln(w, "scores (evaluated after the loop; never shown to a role):")
		for _, r := range v.Scores {
			fmt.Fprintf(w, "  checkpoint %d %s = %g (cumulative tokens %g)\n", r.Checkpoint, r.Metric, r.Value, r.Tokens)
		}
	}
	fmt.Fprintln(w)
	return nil
}
