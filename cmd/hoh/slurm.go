package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/plan"
	"github.com/hoh-research/hoh/experiments/runner"
	"github.com/hoh-research/hoh/experiments/runner/status"
	"github.com/hoh-research/hoh/experiments/slurm"
	"github.com/hoh-research/hoh/runrecord"
)

func init() {
	register("slurm", "run an experiment as a Slurm job array and merge it: slurm submit|status (hoh slurm -h)", slurmCmd)
}

const slurmUsage = `Usage:
  hoh slurm submit CONFIG.yaml --shards N [--output RUN] [--partition P] [--time T] [--cpus-per-task C]
                   [--mem M] [--gres G] [--account A] [--sbatch ARG]...
  hoh slurm status RUN [--wait]`

func slurmCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(stderr, slurmUsage)
		if len(args) == 0 {
			return fmt.Errorf("%w: which slurm command? (submit, status)", errUsage)
		}
		return nil
	}
	switch args[0] {
	case "submit":
		return slurmSubmit(args[1:], stdout, stderr)
	case "status":
		return slurmStatus(args[1:], stdout, stderr)
	}
	fmt.Fprintln(stderr, slurmUsage)
	return fmt.Errorf("%w: unknown slurm command %q (submit, status)", errUsage, args[0])
}

// slurmSubmitOptions are hoh slurm submit's flags and config file.
type slurmSubmitOptions struct {
	shards     int
	output     string
	resources  slurm.Resources
	configFile string
}

func slurmSubmit(args []string, stdout, stderr io.Writer) error {
	o, err := parseSlurmSubmitFlags(args, stderr)
	if err != nil {
		return err
	}
	return submitRun(o, stdout)
}

// parseSlurmSubmitFlags reads hoh slurm submit's command line; an extra
// sbatch option is checked before anything is submitted.
func parseSlurmSubmitFlags(args []string, stderr io.Writer) (slurmSubmitOptions, error) {
	var o slurmSubmitOptions
	fs := newFlags("slurm submit", stderr)
	fs.IntVar(&o.shards, "shards", 0, "number of shards, one array task each (default on a resubmission: the run's)")
	fs.StringVar(&o.output, "output", "", "run directory (overrides the config's output); shards go to RUN/shard-k, the merge to RUN/merged")
	r := &o.resources
	fs.StringVar(&r.Partition, "partition", "", "sbatch --partition (default: the cluster's)")
	fs.StringVar(&r.Account, "account", "", "sbatch --account")
	fs.StringVar(&r.Time, "time", "", "sbatch --time per shard (default: from the config's timeouts, iterations and concurrency, at most 7 days)")
	fs.IntVar(&r.CPUsPerTask, "cpus-per-task", 0, "sbatch --cpus-per-task per shard (default: the config's concurrency)")
	fs.StringVar(&r.Mem, "mem", "", "sbatch --mem per shard (default: the cluster's)")
	fs.StringVar(&r.Gres, "gres", "", "sbatch --gres per shard")
	var extra multiFlag
	fs.Var(&extra, "sbatch", "another sbatch option for both jobs, e.g. --sbatch=--qos=long (repeatable)")
	fs.Usage = func() { fmt.Fprintln(stderr, slurmUsage); fs.PrintDefaults() }
	if err := parseFlags(fs, args); err != nil {
		return o, err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return o, fmt.Errorf("%w: want exactly one config file", errUsage)
	}
	for _, e := range extra {
		if err := slurm.CheckDirective(e); err != nil {
			return o, fmt.Errorf("%w: %v", errUsage, err)
		}
	}
	r.Extra = extra
	o.configFile = fs.Arg(0)
	return o, nil
}

// submitRun submits the run's incomplete shards as an array job and a
// merge job after them, or says there is nothing to submit.
func submitRun(o slurmSubmitOptions, stdout io.Writer) error {
	r := o.resources
	exp, err := config.Load(o.configFile)
	if err != nil {
		return err
	}
	if o.output != "" {
		if exp.Output, err = filepath.Abs(o.output); err != nil {
			return err
		}
	}
	l := slurm.Layout{Dir: exp.Output}
	if _, err := plan.ReadLock(l.Dir); err == nil {
		return fmt.Errorf("%s holds an unsharded run (its lock.json); give hoh slurm submit another --output", l.Dir)
	}
	subs, err := slurm.ReadSubmissions(l)
	if err != nil {
		return err
	}
	n, err := shardCount(l, subs, o.shards)
	if err != nil {
		return err
	}
	ctx := context.Background()
	p, err := runner.Prepare(ctx, exp, nil)
	if err != nil {
		return err
	}
	if r.CPUsPerTask == 0 {
		r.CPUsPerTask = max(exp.Concurrency, 1)
	}
	if r.Time == "" {
		r.Time = shardTime(p, n)
	}
	if err := leaveQueuedShards(l, subs, n); err != nil {
		return err
	}
	todo, err := incompleteShards(l, n)
	if err != nil {
		return err
	}
	if len(todo) == 0 {
		if _, err := os.Stat(runrecord.RunLayout{Dir: l.Merged()}.Lock()); err == nil && len(subs) > 0 {
			fmt.Fprintf(stdout, "every shard of %s is complete and merged into %s: nothing to submit\n", l.Dir, l.Merged())
			return nil
		}
	}
	j, err := slurmJobs(o.configFile, exp.Name, n, r)
	if err != nil {
		return err
	}
	if err := slurm.WriteScripts(l, j); err != nil {
		return err
	}
	for _, k := range todo {
		os.Remove(l.ExitFile(k)) // the new job's exit replaces the old
	}
	sub, err := slurm.Submit(l, j, todo)
	if err != nil {
		return err
	}
	printSubmission(stdout, l, sub, todo, n, len(subs) > 0, len(p.Trials), r)
	return nil
}

// shardCount is the run's number of shards: --shards, or on a
// resubmission the run's own, which it keeps.
func shardCount(l slurm.Layout, subs []slurm.Submission, shards int) (int, error) {
	n := shards
	if len(subs) > 0 {
		prev := subs[len(subs)-1].Shards
		if n == 0 {
			n = prev
		} else if n != prev {
			return 0, fmt.Errorf("%s was submitted as %d shards; a resubmission keeps them (--shards %d, or another --output)", l.Dir, prev, prev)
		}
	}
	if n < 1 {
		return 0, fmt.Errorf("%w: --shards N (N >= 1) is required for a new run", errUsage)
	}
	return n, nil
}

// leaveQueuedShards refuses to submit while a shard is still queued or
// running, and cancels the last merge job, whose shards ended.
func leaveQueuedShards(l slurm.Layout, subs []slurm.Submission, n int) error {
	// What is still queued or running is not submitted again.
	states, _ := slurm.Query(submittedJobs(subs))
	var active []string
	for k := 1; k <= n; k++ {
		if job := lastShardJob(subs, k); job != "" && states[job].Active() {
			active = append(active, fmt.Sprintf("shard %d is %s as job %s", k, states[job].State, job))
		}
	}
	if len(active) > 0 {
		return fmt.Errorf("%s is still in Slurm's queue (%s); wait for it or scancel it, then submit again (hoh slurm status %s)",
			l.Dir, strings.Join(active, "; "), l.Dir)
	}
	if len(subs) > 0 {
		if m := subs[len(subs)-1].MergeJob; m != "" && states[m].Active() {
			// Its shards ended; a new merge job replaces it.
			if err := slurm.Cancel(m); err != nil {
				return err
			}
		}
	}
	return nil
}

// incompleteShards are the shards still to run, in order.
func incompleteShards(l slurm.Layout, n int) ([]int, error) {
	var todo []int
	for k := 1; k <= n; k++ {
		st, err := slurm.InspectShard(l, k, n)
		if err != nil {
			return nil, err
		}
		if !st.Complete() {
			todo = append(todo, k)
		}
	}
	return todo, nil
}

// slurmJobs describes the jobs' scripts: this hoh binary, the config and
// the working directory, absolute since the jobs run elsewhere.
func slurmJobs(configFile, name string, n int, r slurm.Resources) (slurm.Jobs, error) {
	hoh, err := os.Executable()
	if err != nil {
		return slurm.Jobs{}, err
	}
	cfgPath, err := filepath.Abs(configFile)
	if err != nil {
		return slurm.Jobs{}, err
	}
	wd, err := os.Getwd()
	if err != nil {
		return slurm.Jobs{}, err
	}
	return slurm.Jobs{Hoh: hoh, Config: cfgPath, Workdir: wd, Name: name, Shards: n, Resources: r}, nil
}

// printSubmission says what was submitted, and how to watch it.
func printSubmission(stdout io.Writer, l slurm.Layout, sub slurm.Submission, todo []int, n int, resubmission bool, trials int, r slurm.Resources) {
	if resubmission {
		fmt.Fprintf(stdout, "resubmitting %d of %d shard(s) (%d complete, kept)\n", len(todo), n, n-len(todo))
	}
	if sub.ArrayJob != "" {
		fmt.Fprintf(stdout, "array job %s: shard(s) %s of %d (%d trial(s) planned), each %s, %d cpu(s); logs %s\n",
			sub.ArrayJob, shardList(todo), n, trials, r.Time, r.CPUsPerTask, l.Logs())
	}
	fmt.Fprintf(stdout, "merge job %s: hoh merge into %s, then hoh report and hoh view", sub.MergeJob, l.Merged())
	if sub.ArrayJob != "" {
		fmt.Fprintf(stdout, " (after every shard succeeds)")
	}
	fmt.Fprintf(stdout, "\nscripts: %s, %s\nwatch with: %s\n", l.ArrayScript(), l.MergeScript(), shellCommand([]string{"slurm", "status", l.Dir}))
}

// shardTime is a shard's default time limit: its trials in rounds of the
// config's concurrency, each trial every role's timeout per iteration,
// plus a margin; at most 7 days.
func shardTime(p *plan.Plan, n int) string {
	most := 0
	for k := 1; k <= n; k++ {
		most = max(most, slurm.PlannedIn(p.Trials, k, n))
	}
	t := p.Experiment.Timeouts
	var trial time.Duration
	for _, tr := range p.Trials {
		iters := max(tr.Arm.Checkpoint, 1)
		trial = max(trial, time.Duration(iters)*(t.Planner+t.Developer+t.QA))
	}
	rounds := (most + max(p.Experiment.Concurrency, 1) - 1) / max(p.Experiment.Concurrency, 1)
	d := time.Duration(rounds)*trial + 30*time.Minute
	d = min(d, 7*24*time.Hour)
	mins := int(d.Minutes())
	return fmt.Sprintf("%d-%02d:%02d:00", mins/(24*60), mins/60%24, mins%60)
}

// lastShardJob is the array task id ("ARRAY_K") of shard k's latest job.
func lastShardJob(subs []slurm.Submission, k int) string {
	for i := len(subs) - 1; i >= 0; i-- {
		for _, t := range subs[i].Tasks {
			if t == k && subs[i].ArrayJob != "" {
				return fmt.Sprintf("%s_%d", subs[i].ArrayJob, k)
			}
		}
	}
	return ""
}

func submittedJobs(subs []slurm.Submission) []string {
	var out []string
	for _, s := range subs {
		if s.ArrayJob != "" {
			out = append(out, s.ArrayJob)
		}
		if s.MergeJob != "" {
			out = append(out, s.MergeJob)
		}
	}
	return out
}

func shardList(ks []int) string {
	var s []string
	for _, k := range ks {
		s = append(s, fmt.Sprint(k))
	}
	return strings.Join(s, ",")
}

func slurmStatus(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("slurm status", stderr)
	wait := fs.Bool("wait", false, "wait until no job of the run is queued or running (a line each time the jobs' states change), then print; fail unless the run is merged")
	fs.Usage = func() { fmt.Fprintln(stderr, slurmUsage); fs.PrintDefaults() }
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fmt.Errorf("%w: want one run directory", errUsage)
	}
	l := slurm.Layout{Dir: fs.Arg(0)}
	subs, err := slurm.ReadSubmissions(l)
	if err != nil {
		return err
	}
	if len(subs) == 0 {
		return fmt.Errorf("%s was never submitted with hoh slurm submit (no %s)", l.Dir, l.Submissions())
	}
	said := ""
	for {
		states, qerr := slurm.Query(submittedJobs(subs))
		busy := false
		for _, s := range states {
			busy = busy || s.Active()
		}
		if *wait && busy {
			// A line per change, so a long wait is not silence.
			if line := jobStatesLine(states); line != said {
				fmt.Fprintf(stdout, "%s waiting: %s\n", time.Now().Format("15:04:05"), line)
				said = line
			}
			time.Sleep(3 * time.Second)
			continue
		}
		merged, err := printSlurmStatus(stdout, l, subs, states, qerr)
		if err != nil {
			return err
		}
		if *wait && !merged {
			return fmt.Errorf("no job of %s is queued or running, and it is not merged: hoh slurm submit again resubmits what is not complete", l.Dir)
		}
		return nil
	}
}

// jobStatesLine counts the jobs by state, states in alphabetical order
// ("1 PENDING, 2 RUNNING").
func jobStatesLine(states map[string]slurm.JobState) string {
	count := map[string]int{}
	for _, s := range states {
		count[strings.Fields(s.State + " -")[0]]++
	}
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(count)) {
		parts = append(parts, fmt.Sprintf("%d %s", count[name], name))
	}
	return strings.Join(parts, ", ")
}

// printSlurmStatus prints the shards' table and the merge; it says whether
// the run is merged.
func printSlurmStatus(w io.Writer, l slurm.Layout, subs []slurm.Submission, states map[string]slurm.JobState, qerr error) (bool, error) {
	last := subs[len(subs)-1]
	n := last.Shards
	fmt.Fprintf(w, "run %s: %d shard(s), config %s, %d submission(s)\n", l.Dir, n, last.Config, len(subs))
	if qerr != nil {
		fmt.Fprintf(w, "note: %v (a job Slurm has forgotten shows its recorded exit, else -)\n", qerr)
	}
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off))
	t.Header("Shard", "Slurm job", "Slurm state", "Planned", "Done", "Failed", "Remaining", "Not run (budget)", "Tokens", "hoh")
	complete, tokens, err := appendShardRows(t, l, subs, states, n)
	if err != nil {
		return false, err
	}
	t.Footer("Total", "", "", "", "", "", "", "", tokens, fmt.Sprintf("%d/%d complete", complete, n))
	if err := t.Render(); err != nil {
		return false, err
	}
	return printSlurmMerge(w, l, last, states)
}

// appendShardRows appends each shard's row: its Slurm job and state, its
// trials by state and what hoh makes of it. It returns how many shards
// are complete and their tokens.
func appendShardRows(t *tablewriter.Table, l slurm.Layout, subs []slurm.Submission, states map[string]slurm.JobState, n int) (complete int, tokens int64, err error) {
	var planned []plan.Trial
	for k := 1; k <= n; k++ {
		st, err := slurm.InspectShard(l, k, n)
		if err != nil {
			return 0, 0, err
		}
		job := lastShardJob(subs, k)
		js, known := states[job]
		slurmState := shardSlurmState(l, k, job, js, known)
		if !st.Started && planned == nil {
			planned = anyPlan(l, n)
		}
		plannedN := st.Planned
		if !st.Started {
			plannedN = slurm.PlannedIn(planned, k, n)
		}
		remaining := st.Remaining + st.Running
		if !st.Started {
			remaining = plannedN
		}
		verdict := shardVerdict(st, js, known)
		if st.Complete() {
			complete++
		}
		plannedText := fmt.Sprint(plannedN)
		if !st.Started && planned == nil {
			plannedText = "-" // no shard wrote the plan yet
		}
		tokens += st.Tokens
		t.Append(k, orDash(job), slurmState, plannedText, st.Done, st.Failed, remaining, st.NotRun, st.Tokens, verdict)
	}
	return complete, tokens, nil
}

// shardSlurmState is what Slurm says of a shard's last job; a job Slurm
// has forgotten shows its recorded exit.
func shardSlurmState(l slurm.Layout, k int, job string, js slurm.JobState, known bool) string {
	slurmState := "-"
	switch {
	case known:
		slurmState = js.State
		if js.Reason != "" && js.Reason != "None" {
			slurmState += " (" + js.Reason + ")"
		}
	default:
		if ej, code, ok := slurm.Exit(l, k); ok && ej == job {
			slurmState = fmt.Sprintf("ended, exit %d", code)
		} else if job != "" {
			slurmState = "gone (no exit recorded: killed?)"
		}
	}
	return slurmState
}

// shardVerdict is what hoh makes of a shard: complete, running, queued,
// or to submit again.
func shardVerdict(st slurm.ShardState, js slurm.JobState, known bool) string {
	var verdict string
	switch {
	case st.Complete():
		verdict = "complete"
	case known && js.Active() && (st.Started || js.State == "RUNNING"):
		verdict = "running"
	case known && js.Active():
		verdict = "queued"
	case st.Started:
		verdict = "resumable (hoh slurm submit again)"
	default:
		verdict = "not started (hoh slurm submit again)"
	}
	return verdict
}

// printSlurmMerge prints the merge job's state and the merged run's
// totals; it says whether the run is merged.
func printSlurmMerge(w io.Writer, l slurm.Layout, last slurm.Submission, states map[string]slurm.JobState) (bool, error) {
	mergeState := "-"
	if js, ok := states[last.MergeJob]; ok {
		mergeState = js.State
		if js.Reason != "" && js.Reason != "None" {
			mergeState += " (" + js.Reason + ")"
		}
	}
	fmt.Fprintf(w, "merge job %s: %s; log %s\n", last.MergeJob, mergeState, filepath.Join(l.Logs(), "merge-"+last.MergeJob+".out"))
	if _, err := os.Stat(runrecord.RunLayout{Dir: l.Merged()}.Lock()); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(w, "merged: not yet (%s)\n", l.Merged())
		return false, nil
	}
	in, err := status.Inspect(l.Merged())
	if err != nil {
		return false, err
	}
	tot := in.Total()
	fmt.Fprintf(w, "merged: %s: %d done, %d failed, %d not run (budget), %d missing, %d tokens\n", l.Merged(), tot.Done, tot.Failed, tot.NotRun, tot.Remaining+tot.Running, tot.Tokens)
	return true, nil
}

// anyPlan is the plan of any started shard (every shard holds the whole
// plan), nil when none started.
func anyPlan(l slurm.Layout, n int) []plan.Trial {
	for k := 1; k <= n; k++ {
		if ts, err := status.ReadPlan(l.Shard(k)); err == nil {
			return ts
		}
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
