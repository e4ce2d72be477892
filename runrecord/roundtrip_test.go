package runrecord

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Each file a run writes, written by the function experiments calls and read
// back by the function analysis, cmd and the runner's resume call: a field
// renamed on one side only fails here.

func TestScoresRoundTrip(t *testing.T) {
	path := TrialLayout{Dir: t.TempDir()}.Scores()
	rows := []Row{
		{Benchmark: "gamecraft", Config: "codex-x", Condition: HoH, Checkpoint: 2, Task: "action-1",
			Family: "action", Group: "Action", Category: "", Metric: "overall", Value: 71.25,
			Tokens: 123456, Rep: 2, Source: "gamecraft/codex-x/hoh@2/action-1/rep-2"},
		{Benchmark: "frontierswe", Config: "pi-y", Condition: Vanilla, Checkpoint: 1, Task: "t, with comma",
			Category: "Implementation", Metric: "reward", Value: 0.25, Tokens: math.NaN(), Rep: 1, Source: "s"},
	}
	if err := WriteScores(path, rows); err != nil {
		t.Fatal(err)
	}
	got, err := ReadScores(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) {
		t.Fatalf("%d rows back, wrote %d", len(got), len(rows))
	}
	for i := range rows {
		w, g := rows[i], got[i]
		if w.HasTokens() != g.HasTokens() || w.HasTokens() && w.Tokens != g.Tokens {
			t.Errorf("row %d tokens %v, wrote %v", i, g.Tokens, w.Tokens)
		}
		w.Tokens, g.Tokens = 0, 0
		if w != g {
			t.Errorf("row %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
	if !HasScoreHeader(path) {
		t.Error("a written scores.csv is not recognised as a score file")
	}
}

func TestLedgerRoundTrip(t *testing.T) {
	path := TrialLayout{Dir: t.TempDir()}.Usage()
	invs := []Invocation{
		{Iteration: 1, Role: "planner", Attempt: 1, Outcome: OutcomeCompleted,
			Usage:    Usage{Input: 100, CachedInput: 40, Output: 20, Reasoning: 5, Total: 120},
			Duration: 3 * time.Second, Session: "s-1", Dir: "iter-01/planner/attempt-1"},
		{Iteration: 1, Role: "developer", Attempt: 2, Outcome: OutcomeInfraFailure, Evidence: "HTTP 503",
			Usage: Usage{Input: 7, Output: 1, Total: 8}, Dir: "iter-01/developer/attempt-2"},
	}
	if err := WriteLedger(path, invs); err != nil {
		t.Fatal(err)
	}
	got, err := ReadLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d entries back", len(got))
	}
	for i := range invs {
		if !reflect.DeepEqual(got[i].Invocation, invs[i]) || got[i].Line != i+1 {
			t.Errorf("entry %d (line %d):\n got %+v\nwant %+v", i, got[i].Line, got[i].Invocation, invs[i])
		}
	}
	u, err := LedgerUsage(path)
	if err != nil || u != invs[0].Usage.Add(invs[1].Usage) {
		t.Errorf("LedgerUsage = %+v, %v", u, err)
	}
	// A missing ledger is empty; a line without usage or torn is named.
	if got, err := ReadLedger(filepath.Join(t.TempDir(), UsageFile)); err != nil || len(got) != 0 {
		t.Errorf("missing ledger: %v %v", got, err)
	}
	os.WriteFile(path, []byte(`{"iteration":1,"role":"qa","attempt":1}`+"\n"), 0o644)
	if _, err := ReadLedger(path); err == nil || !strings.Contains(err.Error(), path+":1") {
		t.Errorf("line without usage: %v", err)
	}
	os.WriteFile(path, []byte(`{"iteration":1,"role":"qa","attempt":1,"usage":{}}`), 0o644)
	if _, err := ReadLedger(path); err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Errorf("torn ledger: %v", err)
	}
}

func TestTrialSpecRoundTrip(t *testing.T) {
	l := TrialLayout{Dir: t.TempDir()}
	spec := TrialSpec{Key: "k", Benchmark: "builtin", Task: "greet", Config: "c", Arm: Arm{Condition: "hoh", Checkpoint: 3}, Rep: 2}
	if err := WriteJSON(l.Spec(), spec); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadTrialSpec(l.Spec()); err != nil || got != spec {
		t.Errorf("ReadTrialSpec = %+v, %v", got, err)
	}
	WriteJSON(l.Spec(), TrialSpec{Key: "k", Task: "greet"})
	if _, err := ReadTrialSpec(l.Spec()); err == nil || !strings.Contains(err.Error(), l.Spec()) {
		t.Errorf("spec without config and arm: %v", err)
	}
}

func TestStagesRoundTrip(t *testing.T) {
	l := TrialLayout{Dir: t.TempDir()}
	recs := []StageRecord{
		{Iteration: 1, Role: "planner", Commit: "c1", Digest: "d1",
			Invocations: []Invocation{{Iteration: 1, Role: "planner", Attempt: 1, Outcome: OutcomeCompleted, Usage: Usage{Input: 1, Total: 1}, Dir: "a"}},
			Session:     "s", Finished: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		{Iteration: 2, Role: "planner", Commit: "c2", Digest: "d1", ReusedFrom: 1, Finished: time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC)},
		{Iteration: 2, Role: "developer", Commit: "c3", StartedFrom: "cp-0", StartDigest: "d0", Violations: []string{"v"},
			RoleFailure: "developer timeout", PlanFrom: 1, SessionNote: "n", Finished: time.Date(2026, 1, 2, 3, 4, 7, 0, time.UTC)},
	}
	for _, r := range recs {
		if err := AppendStage(l.Stages(), r); err != nil {
			t.Fatal(err)
		}
	}
	// A crash mid-append leaves a torn line: that stage was never committed.
	f, _ := os.OpenFile(l.Stages(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"iteration":3,"ro`)
	f.Close()
	got, err := ReadStages(l.Stages())
	if err != nil || !reflect.DeepEqual(got, recs) {
		t.Errorf("ReadStages = %+v, %v", got, err)
	}
}

func TestSummaryRoundTrip(t *testing.T) {
	l := TrialLayout{Dir: t.TempDir()}
	u := Usage{Input: 10, CachedInput: 2, Output: 3, Reasoning: 1, Total: 13}
	s := Summary{
		Spec: TrialSpec{Key: "k", Benchmark: "b", Task: "t", Config: "c", Arm: Arm{Condition: "hoh", Checkpoint: 1}, Rep: 1}, Status: StatusEvaluationFailed,
		Reason:      "checkpoint 1: boom",
		Checkpoints: []Checkpoint{{Step: 1, Commit: "c", Digest: "d", Tokens: 13, Metrics: map[string]float64{"pass_rate": 50}, EvalError: "boom"}},
		Usage:       u, ByRole: map[Role]Usage{RoleDeveloper: u}, ByIteration: map[int]Usage{1: u},
		Violations: []string{"x"}, RoleFailures: []string{"qa"},
		Extensions: []Extension{{FromArm: Arm{Condition: "hoh", Checkpoint: 1}, ToArm: Arm{Condition: "hoh", Checkpoint: 2}, From: 1, To: 2, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}},
		Harness:    "codex", Version: "0.1", Finished: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	if err := WriteJSON(l.Summary(), s); err != nil {
		t.Fatal(err)
	}
	var got Summary
	if err := ReadJSON(l.Summary(), &got); err != nil || !reflect.DeepEqual(got, s) {
		t.Errorf("summary back: %+v, %v", got, err)
	}
}

func TestRunFilesRoundTrip(t *testing.T) {
	run := RunLayout{Dir: t.TempDir()}
	lines := []TrialLine{
		{Key: "k1", Dir: "c/hoh@1/t/rep-1", Config: "c", Arm: Arm{Condition: "hoh", Checkpoint: 1}, Task: "t", Rep: 1, State: StateDone,
			Status: StatusCompleted, Usage: map[string]any{"total": float64(5)}, Replacements: 1, Final: map[string]float64{"m": 1}, Notice: "n"},
		{Key: "k2", State: StateBudget, Reason: "token budget 10 reached (12 spent)"},
	}
	if err := WriteTrialLines(run.Trials(), lines); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadTrialLines(run.Trials()); err != nil || !reflect.DeepEqual(got, lines) {
		t.Errorf("trials.jsonl back: %+v, %v", got, err)
	}

	reps := []Replacement{
		{Key: "k1", Dir: "c/hoh@1/t/rep-1", Attempt: 1, Reason: "infrastructure failure", Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		{Key: "k1", Dir: "c/hoh@1/t/rep-1", Attempt: 2, Reason: "again", Time: time.Date(2026, 1, 2, 3, 5, 5, 0, time.UTC)},
	}
	for _, r := range reps {
		if err := AppendReplacement(run.Replacements(), r); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := ReadReplacements(run.Replacements()); err != nil || !reflect.DeepEqual(got, reps) {
		t.Errorf("replacements.jsonl back: %+v, %v", got, err)
	}
	// A later clean run of k1 supersedes its replacements: no line is added,
	// both are marked.
	if err := AppendReplacement(run.Replacements(), Replacement{Key: "k1", Dir: "c/hoh@1/t/rep-1", Supersedes: true, Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadReplacements(run.Replacements())
	if err != nil || len(got) != 2 || !got[0].Superseded || !got[1].Superseded {
		t.Errorf("superseded replacements back: %+v, %v", got, err)
	}
	if got, err := ReadReplacements(filepath.Join(t.TempDir(), ReplacementsFile)); err != nil || len(got) != 0 {
		t.Errorf("missing replacement log: %v %v", got, err)
	}

	tl := run.Trial("c/hoh@1/t/rep-1")
	fail := Failure{Key: "k1", Reason: "gave up", Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if err := WriteJSON(tl.RunnerFailure(), fail); err != nil {
		t.Fatal(err)
	}
	var back Failure
	if err := ReadJSON(tl.RunnerFailure(), &back); err != nil || back != fail {
		t.Errorf("runner-failure.json back: %+v, %v", back, err)
	}
}

func TestLayoutNamesThePaths(t *testing.T) {
	run := RunLayout{Dir: "runs/x"}
	tl := run.Trial("c/hoh@3/t/rep-1")
	for got, want := range map[string]string{
		run.Lock(): "runs/x/lock.json", run.Plan(): "runs/x/plan.json", run.Trials(): "runs/x/trials.jsonl",
		run.Scores(): "runs/x/scores.csv", run.Replacements(): "runs/x/replacements.jsonl", run.RunnerLock(): "runs/x/.lock",
		run.ProviderLog("c"): "runs/x/provider-c.jsonl", run.Inputs(): "runs/x/inputs",
		tl.CheckpointVerifier(2):                                 "runs/x/c/hoh@3/t/rep-1/evaluation/cp-2-verifier",
		tl.StageFiles(2, "developer").Attempt(4).HarnessResult(): "runs/x/c/hoh@3/t/rep-1/iter-02/developer/attempt-4/logs/result.json",
		tl.Spec(): "runs/x/c/hoh@3/t/rep-1/trial.json", tl.Stages(): "runs/x/c/hoh@3/t/rep-1/stages.jsonl",
		tl.Usage(): "runs/x/c/hoh@3/t/rep-1/usage.jsonl", tl.Summary(): "runs/x/c/hoh@3/t/rep-1/summary.json",
		tl.Scores(): "runs/x/c/hoh@3/t/rep-1/scores.csv", tl.GitDir(): "runs/x/c/hoh@3/t/rep-1/history.git",
		tl.CheckpointEvaluation(2):                        "runs/x/c/hoh@3/t/rep-1/evaluation/cp-2.json",
		tl.RunnerFailure():                                "runs/x/c/hoh@3/t/rep-1/runner-failure.json",
		tl.Stage(3, "qa"):                                 "runs/x/c/hoh@3/t/rep-1/iter-03/qa",
		tl.StageFiles(1, "planner").Plan():                "runs/x/c/hoh@3/t/rep-1/iter-01/planner/plan.json",
		tl.StageFiles(2, "developer").Attempt(4).Result(): "runs/x/c/hoh@3/t/rep-1/iter-02/developer/attempt-4/result.json",
	} {
		if got != filepath.FromSlash(want) {
			t.Errorf("%s, want %s", got, want)
		}
	}
}

func TestExtensionsRoundTrip(t *testing.T) {
	l := TrialLayout{Dir: t.TempDir()}
	exts := []Extension{
		{FromArm: Arm{Condition: "vanilla", Checkpoint: 1}, ToArm: Arm{Condition: "vanilla-continuation", Checkpoint: 2}, From: 1, To: 2, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		{FromArm: Arm{Condition: "hoh", Checkpoint: 2}, ToArm: Arm{Condition: "hoh", Checkpoint: 3}, From: 2, To: 3, Time: time.Date(2026, 1, 3, 3, 4, 5, 0, time.UTC)},
	}
	for _, e := range exts {
		if err := Append(l.Extensions(), e); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := ReadExtensions(l.Extensions()); err != nil || !reflect.DeepEqual(got, exts) {
		t.Errorf("extensions.jsonl back: %+v, %v", got, err)
	}
}

func TestContractsRoundTrip(t *testing.T) {
	st := TrialLayout{Dir: t.TempDir()}.StageFiles(2, "qa")
	ev := Evidence{Iteration: 2, CandidateDigest: "sha256:abc", QAStatus: "partial",
		Verified: []Claim{{ClaimID: "C1", Claim: "title screen", Status: "verified",
			ExecutionRecords: []ExecutionRecord{{Type: "command", Command: "./run", Observation: "shown"}}}},
		Gaps:    []Claim{{ClaimID: "C2", Claim: "score", Status: "gap", RecommendedUpdate: "count points"}},
		Handoff: Handoff{UpdateTargets: []string{"count points"}}, Notes: []string{"n"}}
	if err := WriteJSON(st.Evidence(), ev); err != nil {
		t.Fatal(err)
	}
	var back Evidence
	if err := ReadJSON(st.Evidence(), &back); err != nil {
		t.Fatal(err)
	}
	// Empty lists are written as [] (readers need not tell none from missing).
	ev.Gaps[0].ExecutionRecords = []ExecutionRecord{}
	ev.Handoff.PreservationConstraints, ev.Handoff.ValidationRequirements = []string{}, []string{}
	if !reflect.DeepEqual(back, ev) {
		t.Errorf("evidence.json:\n got %+v\nwant %+v", back, ev)
	}
	plan := Plan{Objective: "o", Tasks: []PlanTask{{ID: "T1", Description: "d"}}, Preserve: []string{"p"},
		Acceptance: []Acceptance{{ID: "R1", Requirement: "r", Observation: "look"}}}
	if err := WriteJSON(st.Plan(), plan); err != nil {
		t.Fatal(err)
	}
	var pback Plan
	if err := ReadJSON(st.Plan(), &pback); err != nil || !reflect.DeepEqual(pback, plan) {
		t.Errorf("plan.json: %+v %v, wrote %+v", pback, err, plan)
	}
	if md := plan.Markdown(2); !strings.Contains(md, "D_2") || !strings.Contains(md, "- R1: r (observe: look)") {
		t.Errorf("plan.md:\n%s", md)
	}
	rep := QAReport{Iteration: 2, QAStatus: "fail", GapRecords: []Claim{{ClaimID: "C2", Claim: "score"}},
		PlannerHandoff: &Handoff{UpdateTargets: []string{"u"}}}
	if err := WriteJSON(st.Report(), rep); err != nil {
		t.Fatal(err)
	}
	var rback QAReport
	if err := ReadJSON(st.Report(), &rback); err != nil || !reflect.DeepEqual(rback, rep) {
		t.Errorf("report.json: %+v %v, wrote %+v", rback, err, rep)
	}
}

func TestLockAndPlanRoundTrip(t *testing.T) {
	run := RunLayout{Dir: t.TempDir()}
	if _, err := ReadPlan(run.Dir); err == nil || !strings.Contains(err.Error(), "not a run directory") {
		t.Errorf("a directory without plan.json: %v", err)
	}
	lock := Lock{Experiment: "e", ConfigDigest: "sha256:c", TaskDigests: map[string]string{"t": "d"},
		Harnesses: map[string]string{"codex-x": "codex@1"}, HohVersion: "v", Keys: []string{"k1"}, Shard: "1/2",
		ShardBy: ShardByCost, ShardOf: map[string]int{"k1": 1}}
	if err := WriteJSON(run.Lock(), lock); err != nil {
		t.Fatal(err)
	}
	if back, err := ReadLock(run.Dir); err != nil || !reflect.DeepEqual(back, lock) {
		t.Errorf("lock.json: %+v %v, wrote %+v", back, err, lock)
	}
	plan := []PlannedTrial{{Key: "k1", Dir: "codex-x/hoh@2/t/rep-1", Config: "codex-x", Arm: Arm{Condition: "hoh", Checkpoint: 2},
		Task: PlannedTask{Benchmark: "builtin", ID: "t", Family: "f"}, TaskDigest: "sha256:t", Rep: 1}}
	if err := WriteJSON(run.Plan(), plan); err != nil {
		t.Fatal(err)
	}
	back, err := ReadPlan(run.Dir)
	if err != nil || !reflect.DeepEqual(back, plan) {
		t.Errorf("plan.json: %+v %v, wrote %+v", back, err, plan)
	}
	// A trial's state comes from its files: running once trial.json exists,
	// done with a completed summary.
	tl := run.Trial(plan[0].Dir)
	if p := ReadTrialProgress(tl, "", false); p.State != StateRemaining {
		t.Errorf("no files: %s", p.State)
	}
	if err := WriteJSON(tl.Spec(), plan[0].Spec()); err != nil {
		t.Fatal(err)
	}
	if p := ReadTrialProgress(tl, "", false); p.State != StateRunning {
		t.Errorf("trial.json only: %s", p.State)
	}
	if err := WriteJSON(tl.Summary(), Summary{Spec: plan[0].Spec(), Status: StatusCompleted, Usage: Usage{Total: 9}}); err != nil {
		t.Fatal(err)
	}
	rp, err := ReadRunProgress(run.Dir)
	if err != nil || len(rp.Trials) != 1 || rp.Trials[0].State != StateDone || rp.Trials[0].Usage.Total != 9 || rp.Lock.Experiment != "e" {
		t.Errorf("run progress %+v %v", rp, err)
	}
}

func TestProjectRecordsRoundTrip(t *testing.T) {
	l := ProjectLayout{Project: t.TempDir()}
	issues := []Issue{{ID: "I1", State: IssueReopened, Claim: "c", Key: "c", ClaimIDs: []string{"C1"}, Opened: 1,
		GapLoops: []int{1, 3}, VerifiedLoops: []int{2}, ClosedLoops: []int{2}, ReopenedLoops: []int{3},
		History: []Transition{{Loop: 1, To: IssueOpen, ClaimID: "C1", Evidence: "trial/iter-01/qa/evidence.json"}}}}
	if err := WriteFile(l.IssuesJSONL(), IssuesJSONL(issues)); err != nil {
		t.Fatal(err)
	}
	back, err := ReadIssues(l.IssuesJSONL())
	if err != nil || !reflect.DeepEqual(back, issues) {
		t.Errorf("issues.jsonl: %+v %v, wrote %+v", back, err, issues)
	}
	if !back[0].Unresolved() || back[0].LastLoop() != 3 {
		t.Errorf("issue %+v: unresolved %v, last loop %d", back[0], back[0].Unresolved(), back[0].LastLoop())
	}
	dyn := []LoopDynamics{{LoopIssues: LoopIssues{Loop: 1, New: 2, Unresolved: 2, Total: 2}, PlannerTokens: 10, DeveloperTokens: 20,
		QATokens: 30, Tokens: 60, FilesChanged: 1, LinesAdded: 4, LinesDeleted: 1, QAStatus: "partial", BuildStatus: "pass",
		Finished: time.Unix(1700000000, 0).UTC(), FailedRoles: "qa"}, {LoopIssues: LoopIssues{Loop: 2}}}
	if err := WriteFile(l.Dynamics(), DynamicsCSV(dyn)); err != nil {
		t.Fatal(err)
	}
	dback, err := ReadDynamics(l.Dynamics())
	if err != nil || !reflect.DeepEqual(dback, dyn) {
		t.Errorf("dynamics.csv: %+v %v, wrote %+v", dback, err, dyn)
	}
}

// Every path the layouts name is drawn in the package comment's trees, so
// the tree a reader consults is the one the code writes.
func TestLayoutsAreDrawnInTheDocTree(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	proj, err := os.ReadFile("project.go")
	if err != nil {
		t.Fatal(err)
	}
	run := RunLayout{Dir: "r"}
	tl := run.Trial("c/hoh@1/t/rep-1")
	st := tl.StageFiles(1, "qa")
	at := st.Attempt(1)
	paths := []string{run.Lock(), run.Plan(), run.Trials(), run.Scores(), run.Replacements(), run.RunnerLock(),
		run.ProviderLog("x"), run.Preflight(), run.DockerRuns(), ReportDir, ConfigCopyNames[0],
		tl.Spec(), tl.GitDir(), tl.Workspace(), tl.Stages(), tl.Usage(), tl.ReplacedUsage(), tl.Summary(), tl.Scores(),
		tl.Evaluation(), tl.SessionState(), tl.Extensions(), tl.Private(), tl.RunnerFailure(), tl.Served(),
		tl.AgentView(), tl.AgentViewInputs(), tl.AgentViewScratch(), tl.AgentViewLink(),
		st.Plan(), st.PlanMarkdown(), st.Report(), st.Evidence(), st.ContextDir(), st.Artifact(), st.Candidate(),
		st.FinalMessage(), st.Specification(), st.RuntimeChecks(),
		at.Prompt(), at.Result(), at.State(), at.Logs(), StdoutLog, StderrLog, EventsLog, CommandLog}
	for _, p := range paths {
		name := filepath.Base(p)
		name = strings.NewReplacer("provider-x", "provider-<config>", "evidence-1", "evidence-<t-1>").Replace(name)
		if !strings.Contains(string(doc), name) {
			t.Errorf("%s is not in the run directory tree of doc.go", name)
		}
	}
	if !strings.Contains(string(doc), "iter-NN/<role>/") || !strings.Contains(string(doc), "attempt-N/") ||
		!strings.Contains(string(doc), "evaluation/cp-t.json") || filepath.Base(tl.CheckpointEvaluation(3)) != "cp-3.json" {
		t.Error("the stage, attempt and evaluation directories are not drawn in doc.go")
	}
	if filepath.Base(st.PriorEvidence(1)) != "evidence-1.json" {
		t.Errorf("prior evidence %s", st.PriorEvidence(1))
	}
	pl := ProjectLayout{Project: "p"}
	for _, p := range []string{pl.Config(), pl.Identity(), pl.Runs(), pl.Lock(), pl.StopFile(), pl.Trial(), pl.IssuesJSONL(),
		pl.IssuesCSV(), pl.IssuesMD(), pl.Dynamics(), pl.Rollbacks(), pl.GitHub(), pl.ProviderLog(), pl.DiffstatCache(), pl.Report()} {
		if !strings.Contains(string(proj), filepath.Base(p)) {
			t.Errorf("%s is not in the project tree of project.go", filepath.Base(p))
		}
	}
	if name := strings.Replace(filepath.Base(pl.RoleProviderLog(RoleQA)), "qa", "<role>", 1); !strings.Contains(string(proj), name) {
		t.Errorf("%s is not in the project tree of project.go", name)
	}
}

func TestIterationsAndAttemptsAreListedInOrder(t *testing.T) {
	tl := TrialLayout{Dir: t.TempDir()}
	for _, it := range []int{10, 2, 1} {
		if err := os.MkdirAll(tl.Stage(it, "planner"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if got := tl.Iterations(); !reflect.DeepEqual(got, []int{1, 2, 10}) {
		t.Errorf("iterations %v", got)
	}
	st := tl.StageFiles(2, "planner")
	for _, n := range []int{1, 2} {
		if err := WriteFile(st.Attempt(n).Prompt(), []byte("p")); err != nil {
			t.Fatal(err)
		}
	}
	if a := st.Attempts(); len(a) != 2 || a[1] != st.Attempt(2) {
		t.Errorf("attempts %v", a)
	}
}

func TestShardOfFollowsTheLockedDealElseTheHash(t *testing.T) {
	dealt := Lock{Shard: "2/3", ShardBy: ShardByCost, ShardOf: map[string]int{"a": 3}}
	if k := ShardOf(dealt, "a", 3); k != 3 {
		t.Errorf("a dealt trial in shard %d, locked 3", k)
	}
	legacy := Lock{Shard: "2/3", ShardOf: map[string]int{"a": 3}}
	for _, key := range []string{"a", "b", "c", "d"} {
		hash := ShardOf(Lock{}, key, 3)
		if hash < 1 || hash > 3 || ShardOf(legacy, key, 3) != hash {
			t.Errorf("%s: legacy shard %d, hash %d", key, ShardOf(legacy, key, 3), hash)
		}
		if key != "a" && ShardOf(dealt, key, 3) != hash {
			t.Errorf("%s, not in the deal, is not on its hash", key)
		}
	}
	// A deal of another shard count says nothing about this one.
	if k := ShardOf(dealt, "a", 2); k != ShardOf(Lock{}, "a", 2) {
		t.Errorf("a deal of 3 shards used for 2: %d", k)
	}
}
