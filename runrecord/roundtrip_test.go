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
	spec := TrialSpec{Key: "k", Benchmark: "builtin", Task: "greet", Config: "c", Arm: "hoh@3", Rep: 2}
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
		Spec: TrialSpec{Key: "k", Benchmark: "b", Task: "t", Config: "c", Arm: "hoh@1", Rep: 1}, Status: StatusEvaluationFailed,
		Reason:      "checkpoint 1: boom",
		Checkpoints: []Checkpoint{{Step: 1, Commit: "c", Digest: "d", Tokens: 13, Metrics: map[string]float64{"pass_rate": 50}, EvalError: "boom"}},
		Usage:       u, ByRole: map[string]Usage{"developer": u}, ByIteration: map[int]Usage{1: u},
		Violations: []string{"x"}, RoleFailures: []string{"qa"},
		Extensions: []Extension{{FromArm: "hoh@1", ToArm: "hoh@2", From: 1, To: 2, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}},
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
		{Key: "k1", Dir: "c/hoh@1/t/rep-1", Config: "c", Arm: "hoh@1", Task: "t", Rep: 1, State: StateDone,
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
		run.ProviderLog("c"): "runs/x/provider-c.jsonl",
		tl.Spec():            "runs/x/c/hoh@3/t/rep-1/trial.json", tl.Stages(): "runs/x/c/hoh@3/t/rep-1/stages.jsonl",
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
		{FromArm: "vanilla", ToArm: "vanilla-continuation@2", From: 1, To: 2, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		{FromArm: "hoh@2", ToArm: "hoh@3", From: 2, To: 3, Time: time.Date(2026, 1, 3, 3, 4, 5, 0, time.UTC)},
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
