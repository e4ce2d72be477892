package main

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hoh-research/hoh/experiments/runner/status"
	"github.com/hoh-research/hoh/experiments/slurm"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/runrecord"
)

// waitMerged runs hoh slurm status --wait on run (bounded) and returns its
// output; it fails the test unless the run ends merged.
func waitMerged(t *testing.T, bin, run string) string {
	t.Helper()
	cmd := exec.Command(bin, "slurm", "status", "--wait", run)
	done := make(chan struct{})
	timer := time.AfterFunc(4*time.Minute, func() {
		cmd.Process.Kill()
		exec.Command("scancel", "--name=hoh-local-smoke").Run()
		exec.Command("scancel", "--name=hoh-local-smoke-merge").Run()
		close(done)
	})
	out, err := cmd.CombinedOutput()
	if !timer.Stop() {
		<-done
		t.Fatalf("the run did not end within 4 minutes:\n%s\n%s", out, slurmLogs(run))
	}
	if err != nil {
		t.Fatalf("hoh slurm status --wait: %v\n%s\n%s", err, out, slurmLogs(run))
	}
	return string(out)
}

func slurmLogs(run string) string {
	var b strings.Builder
	logs, _ := filepath.Glob(filepath.Join(run, "slurm", "logs", "*.out"))
	for _, l := range logs {
		data, _ := os.ReadFile(l)
		fmt.Fprintf(&b, "--- %s\n%s\n", l, tail(string(data), 3000))
	}
	return b.String()
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// hoh slurm on a real Slurm: a slice of local-smoke (smokeConfig: 4
// trials, dealt one to each shard) submitted as 4 shards runs to merged
// records (scores, stages, ledgers, statuses) equal to the same plan run
// unsharded, and the merge job prints table1 and writes the report. (The
// README runs the whole local-smoke this way.)
func TestSlurmSubmitOfFourShardsMergesToTheUnshardedRun(t *testing.T) {
	testenv.Slurm(t)
	requireCodex(t)
	bin := buildHoh(t)
	base := t.TempDir()

	clean, _ := smokeBaseline(t, bin)
	want := fingerprint(t, clean)

	run := filepath.Join(base, "sharded")
	out := hohRun(t, bin, "slurm", "submit", smokeConfig(t, run), "--shards", "4", "--cpus-per-task", "1", "--time", "20")
	for _, s := range []string{"array job ", "shard(s) 1,2,3,4 of 4", "merge job ", "watch with: "} {
		if !strings.Contains(out, s) {
			t.Errorf("submit output lacks %q:\n%s", s, out)
		}
	}
	for _, f := range []string{"array.sh", "merge.sh", "submissions.jsonl"} {
		if _, err := os.Stat(filepath.Join(run, "slurm", f)); err != nil {
			t.Error(err)
		}
	}
	st := waitMerged(t, bin, run)
	// The merge job waits on the array's, so the wait saw a queued job.
	if !strings.Contains(st, " waiting: ") || !strings.Contains(st, "PENDING") {
		t.Errorf("status --wait printed no line while the jobs ran:\n%s", st)
	}
	if !strings.Contains(st, "4/4 complete") || !strings.Contains(st, "4 done, 0 failed") {
		t.Errorf("status:\n%s", st)
	}
	merged := filepath.Join(run, "merged")
	if got := fingerprint(t, merged); got != want {
		t.Errorf("merged records differ from the unsharded run's:\n--- got\n%s\n--- want\n%s", got, want)
	}
	if _, err := os.Stat(filepath.Join(merged, "report", "index.html")); err != nil {
		t.Errorf("the merge job built no report: %v", err)
	}
	logs, _ := filepath.Glob(filepath.Join(run, "slurm", "logs", "merge-*.out"))
	if len(logs) != 1 {
		t.Fatalf("merge logs: %v", logs)
	}
	if data, _ := os.ReadFile(logs[0]); !strings.Contains(string(data), "merged 4 finished trial(s) from 4") || !strings.Contains(string(data), "paper Table 1 layout") {
		t.Errorf("merge log:\n%s", data)
	}
	// Submitting a complete, merged run again submits nothing.
	if again := hohRun(t, bin, "slurm", "submit", smokeConfig(t, run)); !strings.Contains(again, "nothing to submit") {
		t.Errorf("second submit:\n%s", again)
	}
}

// A shard's job cancelled mid-run (scancel) leaves a resumable shard;
// submitting again runs only the shards that are not complete, and the
// merged records equal the unsharded run's: nothing lost, and no trial
// finished before the cancel was run again.
func TestSlurmScancelledShardResumesOnResubmit(t *testing.T) {
	testenv.Slurm(t)
	requireCodex(t)
	bin := buildHoh(t)
	base := t.TempDir()

	clean, _ := smokeBaseline(t, bin)
	want := fingerprint(t, clean)

	run := filepath.Join(base, "sharded")
	cfg := smokeConfig(t, run)
	hohRun(t, bin, "slurm", "submit", cfg, "--shards", "4", "--cpus-per-task", "1", "--time", "20")
	l := slurm.Layout{Dir: run}
	subs, err := slurm.ReadSubmissions(l)
	if err != nil || len(subs) != 1 {
		t.Fatalf("submissions: %v %v", subs, err)
	}
	// The shard with the most trials, cancelled once it committed a stage.
	victim, most := 0, 0
	trials, err := status.ReadPlan(clean)
	if err != nil {
		t.Fatal(err)
	}
	for k := 1; k <= 4; k++ {
		if n := slurm.PlannedIn(trials, k, 4); n > most {
			victim, most = k, n
		}
	}
	deadline := time.Now().Add(3 * time.Minute)
	for committedStages(l.Shard(victim)) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("shard %d committed no 2 stages within 3 minutes:\n%s", victim, slurmLogs(run))
		}
		time.Sleep(100 * time.Millisecond)
	}
	job := fmt.Sprintf("%s_%d", subs[0].ArrayJob, victim)
	if out, err := exec.Command("scancel", job).CombinedOutput(); err != nil {
		t.Fatalf("scancel %s: %v %s", job, err, out)
	}
	// The other shards finish; the merge job is cancelled with the shard.
	for {
		states, _ := slurm.Query([]string{subs[0].ArrayJob, subs[0].MergeJob})
		busy := false
		for _, s := range states {
			busy = busy || s.Active()
		}
		if !busy {
			break
		}
		if time.Now().After(deadline.Add(time.Minute)) {
			t.Fatalf("jobs still active: %v", states)
		}
		time.Sleep(time.Second)
	}
	sv, err := slurm.InspectShard(l, victim, 4)
	if err != nil {
		t.Fatal(err)
	}
	if sv.Complete() {
		t.Fatalf("shard %d completed before its cancel took effect: %+v", victim, sv)
	}
	st := hohRun(t, bin, "slurm", "status", run)
	if !strings.Contains(st, "resumable (hoh slurm submit again)") || !strings.Contains(st, "merged: not yet") {
		t.Errorf("status after scancel:\n%s", st)
	}
	// What finished before the resubmission must not change.
	before := finishedTrialHashes(t, run)
	if len(before) == 0 {
		t.Fatal("no trial finished before the resubmission")
	}
	out := hohRun(t, bin, "slurm", "submit", cfg)
	if !strings.Contains(out, "resubmitting 1 of 4 shard(s) (3 complete, kept)") || !strings.Contains(out, fmt.Sprintf("shard(s) %d of 4", victim)) {
		t.Errorf("resubmit output:\n%s", out)
	}
	waitMerged(t, bin, run)
	after := finishedTrialHashes(t, run)
	for dir, h := range before {
		if after[dir] != h {
			t.Errorf("%s finished before the resubmission and changed after it (run twice?)", dir)
		}
	}
	merged := filepath.Join(run, "merged")
	if got := fingerprint(t, merged); got != want {
		t.Errorf("merged records after scancel+resubmit differ from the unsharded run's:\n--- got\n%s\n--- want\n%s", got, want)
	}
	assertServedAccounted(t, l.Shard(victim), true)
}

// finishedTrialHashes maps each finished trial directory of run's shards
// to a hash of its files.
func finishedTrialHashes(t *testing.T, run string) map[string]string {
	t.Helper()
	out := map[string]string{}
	shards, _ := filepath.Glob(filepath.Join(run, "shard-*"))
	for _, sh := range shards {
		filepath.WalkDir(sh, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != runrecord.SummaryFile {
				return nil
			}
			dir := filepath.Dir(p)
			h := sha256.New()
			filepath.WalkDir(dir, func(q string, e fs.DirEntry, err error) error {
				if err == nil && !e.IsDir() {
					data, _ := os.ReadFile(q)
					fmt.Fprintf(h, "%s %x\n", q, sha256.Sum256(data))
				}
				return nil
			})
			out[dir] = fmt.Sprintf("%x", h.Sum(nil))
			return nil
		})
	}
	return out
}

// status --wait says each change of the jobs' states on one line; the
// line is the same while nothing changes, so it is printed once.
func TestJobStatesLineCountsByState(t *testing.T) {
	states := map[string]slurm.JobState{"11": {State: "RUNNING"}, "12": {State: "PENDING"}, "13": {State: "RUNNING"}, "14": {State: "CANCELLED by 0"}}
	if got, want := jobStatesLine(states), "1 CANCELLED, 1 PENDING, 2 RUNNING"; got != want {
		t.Errorf("jobStatesLine = %q, want %q", got, want)
	}
	states["12"] = slurm.JobState{State: "RUNNING"}
	if got, want := jobStatesLine(states), "1 CANCELLED, 3 RUNNING"; got != want {
		t.Errorf("after a start: %q, want %q", got, want)
	}
}
