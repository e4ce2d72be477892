// Package slurm runs an experiment's shards as a Slurm job array and merges
// them with a dependent job (hoh slurm). A run directory submitted this way
// holds:
//
//	RUN/slurm/array.sh       the array job: task k runs hoh run --shard k/N into RUN/shard-k
//	RUN/slurm/merge.sh       the merge job: hoh merge into RUN/merged, then hoh report and hoh view
//	RUN/slurm/submissions.jsonl  one line per hoh slurm submit (job ids, shards submitted)
//	RUN/slurm/exit/shard-k   "JOBID EXITCODE" of shard k's last job that ended on its own
//	RUN/slurm/logs/          the jobs' stdout and stderr
//	RUN/shard-k/             shard k's run directory (resumable like any hoh run output)
//	RUN/merged/              the merged records, once every shard is complete
package slurm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hoh-research/hoh/runrecord"
)

// Layout names the files of a Slurm-submitted run directory.
type Layout struct{ Dir string }

func (l Layout) Slurm() string       { return filepath.Join(l.Dir, "slurm") }
func (l Layout) ArrayScript() string { return filepath.Join(l.Dir, "slurm", "array.sh") }
func (l Layout) MergeScript() string { return filepath.Join(l.Dir, "slurm", "merge.sh") }
func (l Layout) Submissions() string { return filepath.Join(l.Dir, "slurm", "submissions.jsonl") }
func (l Layout) Logs() string        { return filepath.Join(l.Dir, "slurm", "logs") }
func (l Layout) ExitFile(k int) string {
	return filepath.Join(l.Dir, "slurm", "exit", fmt.Sprintf("shard-%d", k))
}
func (l Layout) Shard(k int) string { return filepath.Join(l.Dir, fmt.Sprintf("shard-%d", k)) }
func (l Layout) Merged() string     { return filepath.Join(l.Dir, "merged") }

// Resources are the sbatch options of the array job's tasks (Partition,
// Account and Extra also go to the merge job).
type Resources struct {
	Partition, Time, Mem, Gres, Account string
	CPUsPerTask                         int
	Extra                               []string // free sbatch arguments, as given
}

// Jobs says what the scripts run: the hoh binary, the config, the working
// directory they start in and the number of shards.
type Jobs struct {
	Hoh, Config, Workdir string
	Name                 string // the experiment's name, for job names
	Shards               int
	Resources
}

// Submission is one hoh slurm submit (a line of submissions.jsonl).
type Submission struct {
	Time     time.Time `json:"time"`
	Config   string    `json:"config"`
	Shards   int       `json:"shards"`
	Tasks    []int     `json:"tasks,omitempty"` // shards submitted (none: only a merge)
	ArrayJob string    `json:"array_job,omitempty"`
	MergeJob string    `json:"merge_job"`
}

// quote is s quoted for a POSIX shell.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// WriteScripts writes array.sh and merge.sh under the run directory. Paths
// are absolute (a job starts wherever Slurm puts it) and quoted; the job
// array range, log paths and dependency are sbatch's command-line options
// (recorded in submissions.jsonl), so a path needs no #SBATCH quoting.
func WriteScripts(l Layout, j Jobs) error {
	for _, d := range []string{l.Slurm(), l.Logs(), filepath.Dir(l.ExitFile(1))} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	var a bytes.Buffer
	fmt.Fprintf(&a, "#!/bin/bash\n# hoh slurm submit: task k of this array runs shard k/%d of %s into %s.\n", j.Shards, j.Config, filepath.Join(l.Dir, "shard-k"))
	fmt.Fprintf(&a, "# Submitted as: sbatch --array=LIST --output=%s/shard-%%a.out %s (resubmitting runs only incomplete shards)\n", l.Logs(), l.ArrayScript())
	fmt.Fprintf(&a, "#SBATCH --job-name=hoh-%s\n", j.Name)
	// A preempted or failed node's task starts again and resumes its shard.
	fmt.Fprintln(&a, "#SBATCH --requeue")
	for _, d := range j.arrayDirectives() {
		fmt.Fprintf(&a, "#SBATCH %s\n", d)
	}
	fmt.Fprintf(&a, "set -u\ncd %s\nk=\"$SLURM_ARRAY_TASK_ID\"\n", quote(j.Workdir))
	fmt.Fprintf(&a, "%s run --shard \"$k/%d\" --output %s\"$k\" %s\n", quote(j.Hoh), j.Shards, quote(filepath.Join(l.Dir, "shard-")), quote(j.Config))
	// The exit code of a job that ended on its own (a killed job writes
	// nothing; hoh's records say what it left).
	fmt.Fprintf(&a, "rc=$?\necho \"$SLURM_JOB_ID $rc\" > %s\"$k\"\nexit $rc\n", quote(filepath.Join(filepath.Dir(l.ExitFile(1)), "shard-")))

	var m bytes.Buffer
	fmt.Fprintf(&m, "#!/bin/bash\n# hoh slurm submit: once every shard's job succeeded, merge the %d shards into %s,\n# then print table1 and build the HTML report.\n", j.Shards, l.Merged())
	fmt.Fprintf(&m, "#SBATCH --job-name=hoh-%s-merge\n", j.Name)
	for _, d := range j.mergeDirectives() {
		fmt.Fprintf(&m, "#SBATCH %s\n", d)
	}
	fmt.Fprintf(&m, "set -euo pipefail\ncd %s\n", quote(j.Workdir))
	partial := l.Merged() + ".partial"
	fmt.Fprintf(&m, "rm -rf %s\n", quote(partial))
	var shards []string
	for k := 1; k <= j.Shards; k++ {
		shards = append(shards, quote(l.Shard(k)))
	}
	fmt.Fprintf(&m, "%s merge -o %s %s\n", quote(j.Hoh), quote(partial), strings.Join(shards, " "))
	fmt.Fprintf(&m, "rm -rf %s\nmv %s %s\n", quote(l.Merged()), quote(partial), quote(l.Merged()))
	fmt.Fprintf(&m, "%s report table1 --results %s\n", quote(j.Hoh), quote(l.Merged()))
	fmt.Fprintf(&m, "%s view %s\n", quote(j.Hoh), quote(l.Merged()))

	if err := os.WriteFile(l.ArrayScript(), a.Bytes(), 0o755); err != nil {
		return err
	}
	return os.WriteFile(l.MergeScript(), m.Bytes(), 0o755)
}

func (j Jobs) arrayDirectives() []string {
	var out []string
	add := func(flag, v string) {
		if v != "" {
			out = append(out, flag+"="+v)
		}
	}
	add("--partition", j.Partition)
	add("--account", j.Account)
	add("--time", j.Time)
	if j.CPUsPerTask > 0 {
		add("--cpus-per-task", strconv.Itoa(j.CPUsPerTask))
	}
	add("--mem", j.Mem)
	add("--gres", j.Gres)
	return append(out, j.Extra...)
}

func (j Jobs) mergeDirectives() []string {
	var out []string
	if j.Partition != "" {
		out = append(out, "--partition="+j.Partition)
	}
	if j.Account != "" {
		out = append(out, "--account="+j.Account)
	}
	out = append(out, "--cpus-per-task=1")
	return append(out, j.Extra...)
}

// CheckDirective refuses what an #SBATCH line cannot carry.
func CheckDirective(v string) error {
	if strings.ContainsAny(v, "\n\r") {
		return fmt.Errorf("sbatch argument %q holds a newline", v)
	}
	if !strings.HasPrefix(v, "-") {
		return fmt.Errorf("sbatch argument %q is not an option (want e.g. --qos=long)", v)
	}
	return nil
}

// sbatch submits a script with args and returns the job id.
func sbatch(args ...string) (string, error) {
	cmd := exec.Command("sbatch", append([]string{"--parsable"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("sbatch %s: %s", strings.Join(args, " "), strings.TrimSpace(stderr.String()))
		}
		return "", fmt.Errorf("sbatch: %w (is Slurm installed? scripts/start-slurm.sh starts a one-node test cluster)", err)
	}
	id, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";") // "ID;CLUSTER" on a federation
	if id == "" {
		return "", fmt.Errorf("sbatch printed no job id: %q", out)
	}
	return id, nil
}

// Submit submits the array job for tasks (none: only the merge) and the
// merge job depending on it, and records the submission.
func Submit(l Layout, j Jobs, tasks []int) (Submission, error) {
	s := Submission{Time: time.Now().UTC(), Config: j.Config, Shards: j.Shards, Tasks: tasks}
	if len(tasks) > 0 {
		id, err := sbatch("--array="+arrayList(tasks), "--chdir="+j.Workdir,
			"--output="+filepath.Join(l.Logs(), "shard-%a.out"), "--open-mode=append", l.ArrayScript())
		if err != nil {
			return s, err
		}
		s.ArrayJob = id
	}
	args := []string{"--chdir=" + j.Workdir, "--output=" + filepath.Join(l.Logs(), "merge-%j.out")}
	if s.ArrayJob != "" {
		// A shard that fails ends the merge job instead of leaving it pending.
		args = append(args, "--dependency=afterok:"+s.ArrayJob, "--kill-on-invalid-dep=yes")
	}
	id, err := sbatch(append(args, l.MergeScript())...)
	if err != nil {
		if s.ArrayJob != "" {
			exec.Command("scancel", s.ArrayJob).Run()
		}
		return s, err
	}
	s.MergeJob = id
	return s, runrecord.Append(l.Submissions(), s)
}

// arrayList is sbatch's --array list for shard numbers: ranges where
// consecutive ("1-4", "2,5-6").
func arrayList(ks []int) string {
	ks = append([]int(nil), ks...)
	sort.Ints(ks)
	var parts []string
	for i := 0; i < len(ks); {
		j := i
		for j+1 < len(ks) && ks[j+1] == ks[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(ks[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", ks[i], ks[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// ReadSubmissions reads submissions.jsonl (nil when the run was never
// submitted).
func ReadSubmissions(l Layout) ([]Submission, error) {
	f, err := os.Open(l.Submissions())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Submission
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var s Submission
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", l.Submissions(), n, err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// JobState is what Slurm says of one job (an array task: "ID_K").
type JobState struct {
	State  string // PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, ...
	Reason string // squeue's reason, sacct's exit code
	Source string // squeue, sacct
}

// Active says whether the job is still queued or running.
func (s JobState) Active() bool {
	switch strings.Fields(s.State + " x")[0] {
	case "PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "REQUEUED", "RESIZING", "SUSPENDED", "REQUEUE_HOLD", "REQUEUE_FED", "SIGNALING", "STAGE_OUT":
		return true
	}
	return false
}

// Query asks squeue, then sacct for what squeue no longer holds, about
// jobs (array job ids expand to their tasks, "ID_K"). Jobs neither knows
// are absent from the map; the error says why sacct could not answer
// (accounting disabled), which leaves hoh's own records to speak.
func Query(jobs []string) (map[string]JobState, error) {
	out := map[string]JobState{}
	if len(jobs) == 0 {
		return out, nil
	}
	want := map[string]bool{}
	for _, j := range jobs {
		want[j] = true
	}
	// -r: one line per array task; all of this user's jobs, since squeue
	// refuses a list holding an id it has forgotten.
	sq, err := exec.Command("squeue", "-h", "-r", "-t", "all", "-o", "%i|%T|%r|%F|%K").Output()
	if err != nil {
		return out, fmt.Errorf("squeue: %v", err)
	}
	for _, line := range strings.Split(string(sq), "\n") {
		f := strings.Split(strings.TrimSpace(line), "|")
		if len(f) != 5 {
			continue
		}
		id, arrayJob, task := f[0], f[3], f[4]
		if !want[id] && !want[arrayJob] {
			continue
		}
		if task != "" && task != "N/A" && arrayJob != "" {
			id = arrayJob + "_" + task
		}
		out[id] = JobState{State: f[1], Reason: f[2], Source: "squeue"}
	}
	sa, err := exec.Command("sacct", "-n", "-P", "-X", "-j", strings.Join(jobs, ","), "-o", "JobID,State,ExitCode").CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("sacct: %s", strings.TrimSpace(string(sa)))
	}
	for _, line := range strings.Split(string(sa), "\n") {
		f := strings.Split(strings.TrimSpace(line), "|")
		if len(f) != 3 || strings.Contains(f[0], "[") {
			continue
		}
		if _, ok := out[f[0]]; ok {
			continue // squeue's word is the newer
		}
		out[f[0]] = JobState{State: f[1], Reason: "exit " + f[2], Source: "sacct"}
	}
	return out, nil
}

// Exit reads a shard's exit file: the job and exit code of its last job
// that ended on its own.
func Exit(l Layout, k int) (job string, code int, ok bool) {
	data, err := os.ReadFile(l.ExitFile(k))
	if err != nil {
		return "", 0, false
	}
	f := strings.Fields(string(data))
	if len(f) != 2 {
		return "", 0, false
	}
	code, err = strconv.Atoi(f[1])
	return f[0], code, err == nil
}

// Cancel cancels jobs (scancel).
func Cancel(jobs ...string) error {
	if len(jobs) == 0 {
		return nil
	}
	out, err := exec.Command("scancel", jobs...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("scancel %s: %v: %s", strings.Join(jobs, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
