package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/plan"
	"github.com/hoh-research/hoh/experiments/provider"
	"github.com/hoh-research/hoh/experiments/runner/status"
	"github.com/hoh-research/hoh/runrecord"
)

// instantHarness is an in-process test double for a CLI: it answers every
// role at once with a valid reply and fixed usage per role, so runs are
// deterministic. infraFirst makes the first call of each listed task fail
// with an infrastructure error.
type instantHarness struct {
	mu         sync.Mutex
	calls      int
	infraFirst map[string]bool
}

func (h *instantHarness) Name() string    { return "instant" }
func (h *instantHarness) Version() string { return "1" }

var roleUsage = map[runrecord.Role]int64{runrecord.RolePlanner: 100, runrecord.RoleDeveloper: 300, runrecord.RoleQA: 200}

func (h *instantHarness) Run(_ context.Context, inv harness.Invocation) (runrecord.Result, error) {
	h.mu.Lock()
	h.calls++
	for task := range h.infraFirst {
		if strings.Contains(inv.Prompt, task+".sh") {
			delete(h.infraFirst, task)
			h.mu.Unlock()
			return runrecord.Result{Outcome: runrecord.OutcomeInfraFailure, Evidence: "HTTP 503 from provider (injected)"}, nil
		}
	}
	h.mu.Unlock()
	n := roleUsage[inv.Role]
	res := runrecord.Result{Outcome: runrecord.OutcomeCompleted, Usage: runrecord.Usage{Input: n, Output: n / 10, Total: n + n/10}, SessionID: "s-1"}
	if inv.Session != "" {
		res.SessionID = inv.Session
	}
	switch inv.Role {
	case runrecord.RolePlanner:
		res.FinalMessage = `{"objective":"o","tasks":[{"id":"T1","description":"d"}],"preserve":[],"acceptance":[{"id":"R1","requirement":"r","observation":"o"}]}`
	case runrecord.RoleQA:
		res.FinalMessage = `{"iteration":1,"qa_status":"pass","verified_records":[{"claim_id":"c1","claim":"works","status":"verified","execution_records":[{"type":"command","command":"sh greet.sh","observation":"ok"}]}],"gap_records":[]}`
		res.Tools = []runrecord.ToolCall{{Name: "bash", Input: `{"command":"sh greet.sh"}`}} // the tool log backing the claim
	default:
		os.WriteFile(filepath.Join(inv.WorkDir, "greet.sh"), []byte("#!/bin/sh\nif [ $# -eq 0 ]; then echo 'Hello, World!'; else echo \"Hello, $*!\"; fi\n"), 0o755)
		res.FinalMessage = `{"summary":"wrote greet.sh","self_tests":[]}`
	}
	return res, nil
}

// experiment writes a config (and a placeholder provider script) and loads it.
func experiment(t testing.TB, out, extra string) *config.Experiment {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "script.yaml"), []byte("entries:\n  - name: any\n    match: .\n    repeat: true\n    steps:\n      - say: ok\n"), 0o644)
	text := `name: unit
output: ` + out + `
benchmark: {kind: builtin}
tasks: {ids: [greet, calc]}
configs:
  - label: instant
    harness: codex
    provider: {name: scripted, api: responses, key_env: HOH_UNIT_KEY, model: m}
    scripted: {script: script.yaml}
conditions: [vanilla, hoh@2]
concurrency: 3
retries: {contract: 1, infrastructure: 2, backoff: 1ms}
` + extra
	path := filepath.Join(dir, "exp.yaml")
	os.WriteFile(path, []byte(text), 0o644)
	e, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func opts(h harness.Harness) Options {
	return Options{Agents: provider.Double(h)}
}

func mustRun(t testing.TB, e *config.Experiment, o Options) *Result {
	t.Helper()
	res, err := Run(context.Background(), e, o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func scoreRows(t testing.TB, out string) []string {
	t.Helper()
	rows, err := runrecord.ReadScores(filepath.Join(out, "scores.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, r := range rows {
		s = append(s, fmt.Sprintf("%s %s %s@%d %s %s=%g tokens=%g rep=%d", r.Source, r.Config, r.Condition, r.Checkpoint, r.Task, r.Metric, r.Value, r.Tokens, r.Rep))
	}
	sort.Strings(s)
	return s
}

func TestRunFinishesEveryTrialAndWritesRecords(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	var log bytes.Buffer
	o := opts(&instantHarness{})
	o.Out = &log
	res := mustRun(t, experiment(t, out, ""), o)
	if res.Count(runrecord.StateDone) != 4 || len(res.Outcomes) != 4 {
		t.Fatalf("outcomes %+v", res.Outcomes)
	}
	rows := scoreRows(t, out)
	// vanilla: 1 checkpoint per task; hoh@2: 2 per task.
	if len(rows) != 6 {
		t.Fatalf("scores.csv rows:\n%s", strings.Join(rows, "\n"))
	}
	lines, _ := os.ReadFile(filepath.Join(out, "trials.jsonl"))
	if n := strings.Count(string(lines), "\n"); n != 4 || !strings.Contains(string(lines), "scripted test double") {
		t.Errorf("trials.jsonl:\n%s", lines)
	}
	if !strings.Contains(log.String(), "plumbing check, not results") {
		t.Errorf("progress does not say the provider is the test double:\n%s", log.String())
	}
	// The config and the provider script are kept beside the records, and
	// no stale lock names a finished process.
	for src, kept := range map[string]string{"exp.yaml": "experiment.yaml", "script.yaml": "provider-script-instant.yaml"} {
		want, _ := os.ReadFile(filepath.Join(filepath.Dir(res.Plan.Experiment.File), src))
		got, err := os.ReadFile(filepath.Join(runrecord.RunLayout{Dir: out}.Inputs(), kept))
		if err != nil || len(want) == 0 || !bytes.Equal(got, want) {
			t.Errorf("inputs/%s is not a copy of %s: %v", kept, src, err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, ".lock")); !os.IsNotExist(err) {
		t.Errorf("a finished run leaves .lock behind: %v", err)
	}
	// Rerunning skips everything: the harness is not called again.
	h2 := &instantHarness{}
	res = mustRun(t, experiment(t, out, ""), opts(h2))
	if h2.calls != 0 || res.Count(runrecord.StateDone) != 4 {
		t.Fatalf("rerun called the harness %d times; outcomes %+v", h2.calls, res.Outcomes)
	}
	if got := scoreRows(t, out); strings.Join(got, "\n") != strings.Join(rows, "\n") {
		t.Errorf("rerun changed scores.csv")
	}
}

func TestInfrastructureFailuresAreReplacedAndRecorded(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	h := &instantHarness{infraFirst: map[string]bool{"calc": true}}
	res := mustRun(t, experiment(t, out, ""), opts(h))
	if res.Count(runrecord.StateDone) != 4 {
		t.Fatalf("outcomes %+v", res.Outcomes)
	}
	reps, err := runrecord.ReadReplacements(runrecord.RunLayout{Dir: out}.Replacements())
	if err != nil || len(reps) != 1 {
		t.Fatalf("replacements %+v (%v)", reps, err)
	}
	r := reps[0]
	if r.Attempt != 1 || !strings.Contains(r.Reason, "503") || !strings.Contains(r.Dir, "calc") || r.Key == "" || r.Time.IsZero() {
		t.Errorf("replacement %+v", r)
	}
	for _, o := range res.Outcomes {
		if (o.Trial.Key == r.Key) != (o.Replacements == 1) {
			t.Errorf("%s: %d replacements recorded in the outcome", o.Trial.Dir, o.Replacements)
		}
	}
}

func TestPersistentInfrastructureFailureStopsAtTheLimit(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	e := experiment(t, out, "")
	e.Retries.Infrastructure = 2
	// Two causes, alternating: the circuit breaker (breaker_test.go) does
	// not stop the configuration, each trial meets its own limit.
	h := &brokenHarness{alternate: true}
	res := mustRun(t, e, opts(h))
	if res.Count(runrecord.StateFailed) != 4 {
		t.Fatalf("outcomes %+v", res.Outcomes)
	}
	reps, _ := runrecord.ReadReplacements(runrecord.RunLayout{Dir: out}.Replacements())
	if len(reps) != 8 { // 2 replacements for each of 4 trials
		t.Errorf("%d replacements, want 8", len(reps))
	}
	if !strings.Contains(res.Outcomes[0].Reason, "after 2 replacement") {
		t.Errorf("reason %q", res.Outcomes[0].Reason)
	}
	in, err := status.Inspect(out)
	if err != nil || in.Trials[0].State != runrecord.StateFailed {
		t.Fatalf("status after giving up: %+v %v", in, err)
	}
}

func TestCorruptRecordFailsOnlyItsTrial(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	e := experiment(t, out, "")
	res := mustRun(t, e, opts(&instantHarness{}))
	broken := filepath.Join(out, res.Outcomes[1].Trial.Dir)
	intact := filepath.Join(out, res.Outcomes[2].Trial.Dir)
	for _, d := range []string{broken, intact} {
		os.Remove(runrecord.TrialLayout{Dir: d}.Summary())
	}
	stages := runrecord.TrialLayout{Dir: broken}.Stages()
	data, _ := os.ReadFile(stages)
	os.WriteFile(stages, append([]byte("{not json\n"), data...), 0o644)

	res = mustRun(t, e, opts(&instantHarness{}))
	if res.Count(runrecord.StateDone) != 3 || res.Count(runrecord.StateFailed) != 1 {
		t.Fatalf("outcomes %+v", res.Outcomes)
	}
	f := res.Outcomes[1]
	if f.State != runrecord.StateFailed || !strings.Contains(f.Reason, stages) || !strings.Contains(f.Reason, "corrupt") {
		t.Errorf("failed trial reason %q does not name %s", f.Reason, stages)
	}
	if res.Outcomes[2].State != runrecord.StateDone {
		t.Errorf("intact trial: %+v", res.Outcomes[2])
	}
}

func TestSecondRunnerOnTheSameDirectoryIsRefused(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	os.MkdirAll(out, 0o755)
	unlock, err := lockDir(out)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	h := &instantHarness{}
	_, err = Run(context.Background(), experiment(t, out, ""), opts(h))
	if !isLocked(err) || !strings.Contains(err.Error(), "another hoh run is already using") || h.calls != 0 {
		t.Fatalf("second runner: err %v, %d harness calls", err, h.calls)
	}
}

// A budget reached after the first trial stops the run with paired data:
// trials start task by task, and the task that started (greet) gets every
// arm, while the other (calc) gets none.
func TestTokenBudgetStopsNewTrials(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	e := experiment(t, out, "budget: {tokens: 1}\n")
	e.Concurrency = 1
	res := mustRun(t, e, opts(&instantHarness{}))
	if res.Count(runrecord.StateDone) != 2 || res.Count(runrecord.StateBudget) != 2 {
		t.Fatalf("outcomes %+v", res.Outcomes)
	}
	armsOf := map[string]map[string]bool{}
	for _, o := range res.Outcomes {
		if o.State != runrecord.StateDone {
			continue
		}
		if armsOf[o.Trial.Task.ID] == nil {
			armsOf[o.Trial.Task.ID] = map[string]bool{}
		}
		armsOf[o.Trial.Task.ID][o.Trial.Arm.String()] = true
	}
	if len(armsOf) != 1 || len(armsOf["greet"]) != 2 {
		t.Fatalf("done trials by task and arm %v: want greet with both arms (vanilla, hoh@2) and calc with none", armsOf)
	}
	scored := map[string]map[string]bool{}
	for _, row := range scoreRows(t, out) {
		f := strings.Fields(row)
		if scored[f[3]] == nil {
			scored[f[3]] = map[string]bool{}
		}
		scored[f[3]][f[2]] = true
	}
	if len(scored) != 1 || len(scored["greet"]) != 3 { // vanilla@1, hoh@1, hoh@2
		t.Errorf("scores by task and arm %v: want only greet, with vanilla@1, hoh@1 and hoh@2", scored)
	}
	in, err := status.Inspect(out)
	if err != nil {
		t.Fatal(err)
	}
	g := in.Groups()
	notRun := 0
	for _, x := range g {
		notRun += x.NotRun
	}
	if notRun != 2 {
		t.Errorf("status groups %+v", g)
	}
	var buf bytes.Buffer
	status.Summary(&buf, out, res.Outcomes, res.Plan.Experiment.Scripted())
	if !strings.Contains(buf.String(), "Not run (budget)") {
		t.Errorf("summary:\n%s", buf.String())
	}
}

func TestChangedConfigIsRefusedOnResume(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	mustRun(t, experiment(t, out, ""), opts(&instantHarness{}))
	changed := experiment(t, out, "repetitions: 2\n")
	_, err := Run(context.Background(), changed, opts(&instantHarness{}))
	if err == nil || !strings.Contains(err.Error(), "refusing to resume") || !strings.Contains(err.Error(), "repetitions: 1 -> 2") || !strings.Contains(err.Error(), "4 new (4 -> 8)") {
		t.Fatalf("err %v", err)
	}
	o := opts(&instantHarness{})
	o.AllowChangedConfig = true
	res := mustRun(t, changed, o)
	if res.Count(runrecord.StateDone) != 8 {
		t.Fatalf("outcomes %+v", res.Outcomes)
	}
}

func TestTwoShardsMergedEqualTheUnshardedRun(t *testing.T) {
	base := t.TempDir()
	whole := filepath.Join(base, "whole")
	mustRun(t, experiment(t, whole, ""), opts(&instantHarness{}))
	var dirs []string
	total := 0
	for k := 1; k <= 2; k++ {
		d := filepath.Join(base, fmt.Sprintf("shard-%d", k))
		o := opts(&instantHarness{})
		o.Shard = plan.Shard{K: k, N: 2}
		res := mustRun(t, experiment(t, d, ""), o)
		total += len(res.Outcomes)
		dirs = append(dirs, d)
		// The shard's lock keeps the deal it ran, for its resumes.
		l, err := plan.ReadLock(d)
		if err != nil || l.ShardBy != runrecord.ShardByCost || len(l.ShardOf) != 4 {
			t.Fatalf("shard %d lock: %s %v %v", k, l.ShardBy, l.ShardOf, err)
		}
		for _, o := range res.Outcomes {
			if l.ShardOf[o.Trial.Key] != k {
				t.Errorf("shard %d ran %s, locked to shard %d", k, o.Trial.Dir, l.ShardOf[o.Trial.Key])
			}
		}
	}
	if total != 4 {
		t.Fatalf("shards ran %d trials, want 4", total)
	}
	merged := filepath.Join(base, "merged")
	rep, err := Merge(dirs, merged)
	if err != nil || rep.Trials != 4 || len(rep.Missing) != 0 || len(rep.Duplicates) != 0 {
		t.Fatalf("merge %+v %v", rep, err)
	}
	if a, b := scoreRows(t, whole), scoreRows(t, merged); strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Errorf("merged scores differ:\n%s\nvs\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	in, err := status.Inspect(merged)
	if err != nil || in.Groups()[0].Done != 2 {
		t.Fatalf("merged status %+v %v", in, err)
	}
	// A shard missing, and a shard given twice.
	rep, err = Merge([]string{dirs[0], dirs[0]}, filepath.Join(base, "partial"))
	if err != nil || len(rep.Missing) == 0 || len(rep.Duplicates) == 0 {
		t.Fatalf("partial merge %+v %v", rep, err)
	}
	// A run of another config is not merged.
	other := filepath.Join(base, "other")
	mustRun(t, experiment(t, other, "repetitions: 2\n"), opts(&instantHarness{}))
	if _, err := Merge([]string{dirs[0], other}, filepath.Join(base, "bad")); err == nil || !strings.Contains(err.Error(), "different configuration") {
		t.Fatalf("merge of different configs: %v", err)
	}
}

func TestShowReadsStagesHistoryAndScores(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	res := mustRun(t, experiment(t, out, ""), opts(&instantHarness{}))
	var hoh plan.Trial
	for _, o := range res.Outcomes {
		if o.Trial.Arm.String() == "hoh@2" {
			hoh = o.Trial
		}
	}
	v, err := status.ViewTrial(filepath.Join(out, hoh.Dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Stages) != 6 || v.Summary == nil || len(v.Scores) != 2 {
		t.Fatalf("stages %d summary %v scores %d", len(v.Stages), v.Summary, len(v.Scores))
	}
	tags := 0
	for _, e := range v.History {
		tags += len(e.Tags)
	}
	if tags != 3 || !strings.Contains(v.Diffs[v.History[2].Commit], "greet.sh") {
		t.Errorf("history %+v diffs %v", v.History, v.Diffs)
	}
}

func TestContextCancelLeavesTrialsResumable(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	ctx, cancel := context.WithCancel(context.Background())
	h := &cancelAfter{instantHarness: &instantHarness{}, n: 3, cancel: cancel}
	res, err := Run(ctx, experiment(t, out, ""), opts(h))
	if err == nil || res.Count(runrecord.StateDone) == 4 {
		t.Fatalf("cancelled run: %v %+v", err, res)
	}
	res = mustRun(t, experiment(t, out, ""), opts(&instantHarness{}))
	if res.Count(runrecord.StateDone) != 4 {
		t.Fatalf("resumed outcomes %+v", res.Outcomes)
	}
}

type cancelAfter struct {
	*instantHarness
	n      int
	cancel func()
}

func (c *cancelAfter) Run(ctx context.Context, inv harness.Invocation) (runrecord.Result, error) {
	c.mu.Lock()
	c.n--
	stop := c.n <= 0
	c.mu.Unlock()
	if stop {
		// Like the CLI adapters: a cancelled invocation is an error, not a result.
		c.cancel()
		return runrecord.Result{}, fmt.Errorf("invocation cancelled: %w", context.Canceled)
	}
	return c.instantHarness.Run(ctx, inv)
}

// Raising T (and adding vanilla-continuation@k to vanilla) on a finished run
// continues its trials: exactly the added role invocations run, nothing is
// redone, and the scores gain the new checkpoints; lowering T is refused.
func TestRaisingTExtendsAFinishedRunAndLoweringIsRefused(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	first := &instantHarness{}
	mustRun(t, experiment(t, out, ""), opts(first)) // [vanilla, hoh@2] x 2 tasks
	if first.calls != 2*1+2*6 {
		t.Fatalf("first run: %d invocations", first.calls)
	}
	before := scoreRows(t, out)
	raised := experiment(t, out, "")
	raised.Conditions = []string{"vanilla", "vanilla-continuation@2", "hoh@3"}
	var log bytes.Buffer
	h := &instantHarness{}
	o := opts(h)
	o.Out = &log
	res := mustRun(t, raised, o)
	// Per task: one continuation pass, and one planner + developer + QA.
	if h.calls != 2*(1+3) || res.Count(runrecord.StateDone) != 4 {
		t.Fatalf("extension ran %d invocations (want %d); outcomes %+v", h.calls, 2*(1+3), res.Outcomes)
	}
	if !strings.Contains(log.String(), "hoh@2 -> hoh@3") || !strings.Contains(log.String(), "vanilla -> vanilla-continuation@2") {
		t.Errorf("the extension is not said:\n%s", log.String())
	}
	after := strings.Join(scoreRows(t, out), "\n")
	for _, r := range before {
		if !strings.Contains(after, r) {
			t.Errorf("row %q changed or vanished after the extension", r)
		}
	}
	if !strings.Contains(after, "hoh@3 greet") || !strings.Contains(after, "vanilla-continuation@2 calc") {
		t.Errorf("new checkpoints missing:\n%s", after)
	}
	lowered := experiment(t, out, "")
	lowered.Conditions = []string{"vanilla", "hoh@2"}
	o2 := opts(&instantHarness{})
	o2.AllowChangedConfig = true
	if _, err := Run(context.Background(), lowered, o2); err == nil || !strings.Contains(err.Error(), "lowering") {
		t.Fatalf("lowering T must be refused even with --allow-changed-config, got %v", err)
	}
}

// A resume that will be refused is refused before the preflight spends a
// turn, and before anything says the run is being extended.
func TestAChangedConfigIsRefusedBeforeThePreflight(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	mustRun(t, experiment(t, out, ""), opts(&instantHarness{}))
	h := &instantHarness{}
	o := opts(h)
	o.Preflight = true
	var log bytes.Buffer
	o.Out = &log
	changed := experiment(t, out, "repetitions: 2\ntimeouts: {planner: 5m, developer: 10m, qa: 5m, idle: 2m}\n")
	changed.Conditions = []string{"vanilla", "hoh@3"} // raised T as well
	_, err := Run(context.Background(), changed, o)
	if err == nil || !strings.Contains(err.Error(), "refusing to resume") || !strings.Contains(err.Error(), "timeouts.developer: ") || !strings.Contains(err.Error(), " -> 10m0s") {
		t.Fatalf("err %v", err)
	}
	if h.calls != 0 || strings.Contains(log.String(), "extending") {
		t.Errorf("the refused resume made %d harness call(s) (preflight) or said it extends:\n%s", h.calls, log.String())
	}
	notes, err := ResumeCheck(out, mustPlan(t, changed).Lock, true)
	if err != nil || len(notes) != 2 || !strings.HasPrefix(notes[0], "warning: resuming") || !strings.HasPrefix(notes[1], "extending") {
		t.Errorf("allowed: notes %q, err %v", notes, err)
	}
}

func mustPlan(t *testing.T, e *config.Experiment) *plan.Plan {
	t.Helper()
	p, err := Prepare(context.Background(), e, nil)
	if err != nil {
		t.Fatal(err)
	}
	for label := range p.Lock.Harnesses {
		p.Lock.Harnesses[label] = "instant@1"
	}
	return p
}

// A rerun of a finished run makes no model call: no trial is left, so the
// preflight's trivial turn is skipped too (with a real key it costs tokens).
func TestRerunOfAFinishedRunCallsNoModel(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	first := &instantHarness{}
	o := opts(first)
	o.Preflight = true
	mustRun(t, experiment(t, out, ""), o)
	if first.calls == 0 {
		t.Fatal("the first run made no call")
	}
	again := &instantHarness{}
	o = opts(again)
	o.Preflight = true
	var buf bytes.Buffer
	o.Out = &buf
	res := mustRun(t, experiment(t, out, ""), o)
	if again.calls != 0 {
		t.Errorf("the rerun of a finished run made %d harness call(s)", again.calls)
	}
	if res.Count(runrecord.StateDone) != 4 || !strings.Contains(buf.String(), "preflight: skipped, every trial finished") {
		t.Errorf("rerun: outcomes %+v, output:\n%s", res.Outcomes, buf.String())
	}
}
