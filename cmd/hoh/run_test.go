package main

// Integration tests of hoh run / status / show / merge as a subprocess, with
// the REAL Codex CLI (scripts/install-harnesses.sh) and the scripted
// test-double provider.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/harness/catalogue"
	"github.com/hoh-research/hoh/experiments/runner/status"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/internal/testenv/clienv"
	"github.com/hoh-research/hoh/runrecord"
)

func buildHoh(t *testing.T) string { return testenv.BuildHoh(t) }

// smokeConfig is a small slice of configs/examples/local-smoke.yaml: two
// tasks, three conditions, the same provider script.
func smokeConfig(t *testing.T, out string) string {
	t.Helper()
	root := testenv.RepoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "configs/examples/local-smoke.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.NewReplacer(
		"output: ../../runs/local-smoke", "output: "+out,
		"scripts/local-smoke.yaml", filepath.Join(root, "configs/examples/scripts/local-smoke.yaml"),
		"ids: [greet, fizzbuzz, calc]", "ids: [greet, calc]",
	).Replace(string(data))
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "conditions:") {
			lines[i] = "conditions: [vanilla, vanilla-continuation@2, hoh@2]"
		}
	}
	p := filepath.Join(t.TempDir(), "smoke.yaml")
	os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644)
	return p
}

// baseline is the unsharded run of smokeConfig that several tests compare
// with (the same plan, the same scripted provider: the same records), made
// once per package; the tests only read it.
var baseline struct {
	once      sync.Once
	made      bool
	root, dir string
	log       string
	err       error
}

// smokeBaseline returns the shared unsharded run's directory and output,
// running it with bin the first time.
func smokeBaseline(t *testing.T, bin string) (dir, log string) {
	t.Helper()
	baseline.once.Do(func() {
		root, err := os.MkdirTemp("", "hoh-smoke-baseline-")
		if err != nil {
			baseline.err = err
			return
		}
		baseline.root, baseline.dir = root, filepath.Join(root, "clean")
		cmd := exec.Command(bin, "run", smokeConfig(t, baseline.dir))
		cmd.Dir = testenv.RepoRoot(t)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		t.Logf("the shared unsharded run took %s", time.Since(start).Round(time.Second))
		baseline.log = string(out)
		if err != nil {
			baseline.err = fmt.Errorf("hoh run: %w\n%s", err, out)
			return
		}
		baseline.made = true
	})
	if !baseline.made {
		t.Fatalf("the shared unsharded run failed (in this or an earlier test): %v", baseline.err)
	}
	return baseline.dir, baseline.log
}

// TestMain removes the shared baseline run after the package's tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if baseline.root != "" {
		os.RemoveAll(baseline.root)
	}
	os.Exit(code)
}

func requireCodex(t *testing.T) {
	t.Helper()
	clienv.CLI(t, "codex")
}

func hohRun(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = testenv.RepoRoot(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hoh %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// committedStages counts stage lines over every trial of a run directory.
func committedStages(out string) int {
	n := 0
	filepath.Walk(out, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Name() == "stages.jsonl" {
			data, _ := os.ReadFile(p)
			n += bytes.Count(data, []byte("\n"))
		}
		return nil
	})
	return n
}

// fingerprint is what must not depend on interruptions: score rows, the
// stages of each trial, and each trial's ledger totals.
func fingerprint(t *testing.T, out string) string {
	t.Helper()
	rows, err := runrecord.ReadScores(filepath.Join(out, "scores.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range rows {
		lines = append(lines, fmt.Sprintf("score %s %s %s@%d %s %s=%g tokens=%g", r.Source, r.Config, r.Condition, r.Checkpoint, r.Task, r.Metric, r.Value, r.Tokens))
	}
	ts, err := status.ReadPlan(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range ts {
		v, err := status.ViewTrial(filepath.Join(out, tr.Dir))
		if err != nil {
			t.Fatal(err)
		}
		var st []string
		for _, s := range v.Stages {
			st = append(st, fmt.Sprintf("%d:%s:%d", s.Iteration, s.Role, len(s.Invocations)))
		}
		u, err := runrecord.LedgerUsage(runrecord.RunLayout{Dir: out}.Trial(tr.Dir).Usage())
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, fmt.Sprintf("trial %s stages %s ledger %+v status %s", tr.Dir, strings.Join(st, ","), u, v.Summary.Status))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// assertServedAccounted checks that every token hoh's relay saw served to a
// trial is in its ledger (valid attempts) or among its replaced and killed
// attempts, exactly; with killed, that the kills left killed attempts.
func assertServedAccounted(t *testing.T, out string, killed bool) {
	t.Helper()
	ts, err := status.ReadPlan(out)
	if err != nil {
		t.Fatal(err)
	}
	nKilled := 0
	var relayedAll int64
	for _, tr := range ts {
		lines, others := testenv.AssertServedAccounted(t, runrecord.RunLayout{Dir: out}.Trial(tr.Dir).Dir)
		for _, o := range others {
			if o.Outcome == runrecord.OutcomeKilled {
				nKilled++
			}
		}
		for _, l := range lines {
			relayedAll += l.Usage.Total
		}
	}
	if relayedAll == 0 || (nKilled > 0) != killed {
		t.Errorf("%s: %d tokens relayed, %d killed attempts accounted", out, relayedAll, nKilled)
	}
}

func TestRealCodexRunSurvivesSIGKILLAndEqualsTheUninterruptedRun(t *testing.T) {
	requireCodex(t)
	bin := buildHoh(t)
	base := t.TempDir()

	clean, log := smokeBaseline(t, bin)
	if !strings.Contains(log, "plumbing check, not results") || !strings.Contains(log, "Done") {
		t.Errorf("run output lacks the test-double notice or summary:\n%s", log)
	}
	want := fingerprint(t, clean)
	if !strings.Contains(want, "status completed") || strings.Contains(want, "status protocol") {
		t.Fatalf("uninterrupted run:\n%s", want)
	}

	killed := filepath.Join(base, "killed")
	cfg := smokeConfig(t, killed)
	kills := 0
	for _, after := range []int{2, 6, 11} {
		cmd := exec.Command(bin, "run", cfg)
		cmd.Dir = testenv.RepoRoot(t)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		deadline := time.After(3 * time.Minute)
	wait:
		for {
			select {
			case <-done:
				t.Fatalf("run finished before %d stage commits:\n%s", after, out.String())
			case <-deadline:
				cmd.Process.Kill()
				t.Fatalf("no %d stage commits within 3 minutes:\n%s", after, out.String())
			case <-time.After(50 * time.Millisecond):
				if committedStages(killed) >= after {
					cmd.Process.Signal(syscall.SIGKILL)
					<-done
					kills++
					// Every CLI process dies with hoh (its namespace's init
					// had a parent-death signal): none keeps writing.
					if left := processesMentioning(killed, 5*time.Second); len(left) > 0 {
						t.Fatalf("processes outlived the SIGKILLed hoh: %v", left)
					}
					break wait
				}
			}
		}
	}
	if kills != 3 {
		t.Fatalf("%d kills", kills)
	}
	status := hohRun(t, bin, "status", killed)
	if !strings.Contains(status, "Remaining") || !strings.Contains(status, "not running (last runner pid ") || !strings.Contains(status, "Interrupted") {
		t.Errorf("status:\n%s", status)
	}
	hohRun(t, bin, "run", cfg)
	if got := fingerprint(t, killed); got != want {
		t.Errorf("records after SIGKILL+resume differ from the uninterrupted run:\n--- got\n%s\n--- want\n%s", got, want)
	}
	assertServedAccounted(t, killed, true)
	assertServedAccounted(t, clean, false)
	// No file of either run keeps the key the CLIs were given, killed
	// attempts' state included.
	testenv.AssertNoSecret(t, "hoh-scripted-dummy-key", clean, killed)
	// Only Vanilla Continuation's session-state keeps CLI state (the next
	// pass resumes it), scrubbed without corrupting its databases.
	if n := testenv.AssertSQLiteIntact(t, clean, killed); n == 0 {
		t.Error("no CLI database in the Vanilla Continuation session state to check")
	}
	for _, out := range []string{clean, killed} {
		filepath.Walk(out, func(p string, info os.FileInfo, err error) error {
			if err == nil && info.IsDir() && info.Name() == "state" && strings.HasPrefix(filepath.Base(filepath.Dir(p)), "attempt-") {
				t.Errorf("CLI state left in %s", p)
			}
			return nil
		})
	}
	show := hohRun(t, bin, "show", killed)
	for _, s := range []string{"iter 2 qa", "[cp-2]", "checkpoint 2 pass_rate", "greet.sh |"} {
		if !strings.Contains(show, s) {
			t.Errorf("hoh show lacks %q:\n%s", s, show)
		}
	}
}

func TestRunCheckValidatesShippedConfigs(t *testing.T) {
	bin := buildHoh(t)
	root := testenv.RepoRoot(t)
	out := hohRun(t, bin, "run", "--check", "configs/examples/local-smoke.yaml")
	if !strings.Contains(out, "15 trial(s)") || !strings.Contains(out, "plumbing check") {
		t.Errorf("check output:\n%s", out)
	}
	paths, _ := filepath.Glob(filepath.Join(root, "configs/experiments/*.yaml"))
	if len(paths) == 0 {
		t.Fatal("no configs in configs/experiments")
	}
	for _, p := range paths {
		cmd := exec.Command(bin, "run", "--check", p)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "OPENAI_API_KEY=dummy-value", "DEEPSEEK_API_KEY=dummy-value", "MINIMAX_API_KEY=dummy-value",
			"HOH_FRONTIERSWE="+filepath.Join(root, "adapters/benchmark/harbor/testdata"))
		b, err := cmd.CombinedOutput()
		if strings.Contains(string(b), "dummy-value") {
			t.Errorf("%s: a key value was printed", p)
		}
		if err == nil && strings.Contains(string(b), "config OK") {
			continue
		}
		// Until the OpenCode and Pi adapters are registered, the only
		// acceptable problem is naming one of them; once registered, the
		// config must pass outright.
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
			kind := ""
			if i := strings.Index(l, `unknown harness "`); i >= 0 {
				kind = strings.SplitN(l[i+len(`unknown harness "`):], `"`, 2)[0]
			}
			// A GameCraft config is refused on a machine without its
			// evaluator (TestRunCheckRefusesGameCraftWithoutItsEvaluator).
			if strings.Contains(l, "GameCraft-Bench's evaluator cannot run here") || strings.Contains(l, "godot_bin: none") {
				continue
			}
			if kind == "" || catalogue.Known(kind) {
				t.Errorf("%s: %s", p, l)
			}
		}
	}
	// A broken config fails with file:line.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("name: x\noutput: o\nbenchmark: {kind: builtin}\nconfigs: []\nconditions: [nope]\n"), 0o644)
	cmd := exec.Command(bin, "run", "--check", bad)
	b, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(b), bad+":5:") || !strings.Contains(string(b), bad+":4:") {
		t.Errorf("bad config: %v\n%s", err, b)
	}
}

// A run killed while git commits a stage (history.Repo.CommitIndex: the
// git wrapper below stops the third commit-tree) leaves history.git/index.lock
// (the wrapper creates it as git does, then SIGKILLs hoh and itself);
// rerunning the same command repairs it and ends with the records of an
// uninterrupted run, without manual steps.
func TestKillDuringGitCommitResumesWithoutManualSteps(t *testing.T) {
	requireCodex(t)
	bin := buildHoh(t)
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatal("git is required")
	}
	base := t.TempDir()
	wrapDir := filepath.Join(base, "bin")
	os.MkdirAll(wrapDir, 0o755)
	counter := filepath.Join(base, "commits")
	os.WriteFile(filepath.Join(wrapDir, "git"), []byte(`#!/bin/sh
case " $* " in
*" commit-tree "*)
  n=$(( $(cat "`+counter+`" 2>/dev/null || echo 0) + 1 ))
  echo $n > "`+counter+`"
  if [ $n -eq 3 ]; then
    : > "$GIT_DIR/index.lock"
    kill -KILL $PPID
    kill -KILL $$
  fi;;
esac
exec `+realGit+` "$@"
`), 0o755)

	cfg := func(out string) string {
		p := smokeConfig(t, out)
		data, _ := os.ReadFile(p)
		text := strings.Replace(string(data), "ids: [greet, calc]", "ids: [greet]", 1)
		text = strings.Replace(text, "conditions: [vanilla, vanilla-continuation@2, hoh@2]", "conditions: [hoh@2]", 1)
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	clean := filepath.Join(base, "clean")
	hohRun(t, bin, "run", "--preflight=off", cfg(clean))
	want := fingerprint(t, clean)

	killed := filepath.Join(base, "killed")
	c := cfg(killed)
	cmd := exec.Command(bin, "run", "--preflight=off", c)
	cmd.Dir = testenv.RepoRoot(t)
	cmd.Env = append(os.Environ(), "PATH="+wrapDir+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("hoh was not killed during git commit: %v\n%s", err, out)
	}
	locks, _ := filepath.Glob(filepath.Join(killed, "*", "*", "*", "*", "history.git", "index.lock"))
	if len(locks) != 1 {
		t.Fatalf("no index.lock left by the kill: %v", locks)
	}
	hohRun(t, bin, "run", "--preflight=off", c)
	if got := fingerprint(t, killed); got != want {
		t.Errorf("records after a kill during git commit and resume differ from the uninterrupted run:\n--- got\n%s\n--- want\n%s", got, want)
	}
}

// Ctrl-C (SIGINT) ends the run with what finished and the exact command to
// resume, and that command resumes it.
func TestInterruptPrintsSummaryAndTheResumeCommand(t *testing.T) {
	requireCodex(t)
	bin := buildHoh(t)
	out := filepath.Join(t.TempDir(), "run")
	cfg := smokeConfig(t, out)
	cmd := exec.Command(bin, "run", "--preflight=off", cfg)
	cmd.Dir = testenv.RepoRoot(t)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(3 * time.Minute); committedStages(out) < 2; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no stage committed:\n%s", buf.String())
		}
	}
	cmd.Process.Signal(os.Interrupt)
	if cmd.Wait(); cmd.ProcessState.ExitCode() != exitInterrupted {
		t.Fatalf("an interrupted run exited %d, want %d:\n%s", cmd.ProcessState.ExitCode(), exitInterrupted, buf.String())
	}
	want := "resume with: " + bin + " run --preflight=off " + cfg
	if !strings.Contains(buf.String(), want) || !strings.Contains(buf.String(), "interrupted: ") {
		t.Fatalf("output lacks the summary or %q:\n%s", want, buf.String())
	}
	hohRun(t, bin, "run", "--preflight=off", cfg)
	if st := hohRun(t, bin, "status", out); !strings.Contains(st, "runner: not running") || strings.Contains(st, "failed") {
		t.Errorf("status after the resume:\n%s", st)
	}
}

// processesMentioning waits up to limit for no running process to have
// path in its command line, and returns those still there.
func processesMentioning(path string, limit time.Duration) []string {
	deadline := time.Now().Add(limit)
	for {
		var left []string
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			stat, serr := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if err != nil || serr != nil || !bytes.Contains(cmdline, []byte(path)) {
				continue
			}
			if f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])); len(f) > 0 && f[0] != "Z" {
				left = append(left, e.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}
