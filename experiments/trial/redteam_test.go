package trial

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/benchmark/builtin"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/runrecord"
)

// Red-team: a Developer forges its own score by writing the evaluation
// cache hoh used to reuse. The recorded score must be the artifact's own.
func TestRedTeamForgedEvaluationIsRecomputed(t *testing.T) {
	forged := `{"metrics":{"pass_rate":100}}`
	h := &fakeHarness{devBroken: true, devWrites: map[string]string{"../evaluation/cp-1.json": forged}}
	dir := t.TempDir()
	s, err := runIn(dir, "vanilla", h)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Checkpoints[0].Metrics["pass_rate"]; got == 100 {
		t.Fatalf("forged pass_rate 100 recorded for a broken artifact")
	}
	data, _ := os.ReadFile(filepath.Join(runrecord.TrialLayout{Dir: dir}.Evaluation(), "cp-1.json"))
	if !strings.Contains(string(data), `"mac"`) {
		t.Fatalf("evaluation not rewritten under hoh's seal: %s", data)
	}
	// A resume reuses hoh's own sealed result (no second evaluation needed)
	// and a forged copy of it for another tree is refused.
	again, err := runIn(dir, "vanilla", h)
	if err != nil || again.Checkpoints[0].Metrics["pass_rate"] != s.Checkpoints[0].Metrics["pass_rate"] {
		t.Fatalf("resume: %v %+v", err, again)
	}
	edited := strings.Replace(string(data), `"pass_rate":`, `"pass_rate":100,"x":`, 1)
	if err := os.WriteFile(filepath.Join(runrecord.TrialLayout{Dir: dir}.Evaluation(), "cp-1.json"), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(runrecord.TrialLayout{Dir: dir}.Summary())
	third, err := runIn(dir, "vanilla", h)
	if err != nil || third.Checkpoints[0].Metrics["pass_rate"] == 100 {
		t.Fatalf("an edited sealed result was trusted: %v %+v", err, third)
	}
}

type recordingBench struct {
	builtin.Benchmark
	dirs []string
}

func (b *recordingBench) Evaluate(ctx context.Context, task benchmark.Task, dir string) (runrecord.Evaluation, error) {
	b.dirs = append(b.dirs, dir)
	return b.Benchmark.Evaluate(ctx, task, dir)
}

// Evaluation scratch copies are in the trial's private 0700 directory, not
// in a shared /tmp path another trial's agent could reach.
func TestEvaluationScratchIsPrivatePerTrial(t *testing.T) {
	dir := t.TempDir()
	b := &recordingBench{}
	ts, _ := b.Tasks(context.Background())
	spec := runrecord.TrialSpec{Key: "builtin/greet", Benchmark: "builtin", Task: "greet", Config: "fake", Arm: runrecord.Arm{Condition: "vanilla", Checkpoint: 1}, Rep: 1}
	if _, err := Run(context.Background(), dir, spec, NewEnv(
		Policy{},
		Place{Bench: b, Task: ts[0]},
		Route{},
		&fakeHarness{},
		Mode{},
	)); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(runrecord.TrialLayout{Dir: dir}.Private())
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("private directory: %v %v", err, fi)
	}
	if len(b.dirs) != 1 || filepath.Dir(b.dirs[0]) != (runrecord.TrialLayout{Dir: dir}).Private() {
		t.Fatalf("evaluated in %v, want a copy under %s", b.dirs, runrecord.TrialLayout{Dir: dir}.Private())
	}
}

// Red-team: the QA Tester's shell tries to repair the candidate it judges.
// On the host its view of the candidate is a read-only bind mount: the
// write fails even as root, and the candidate and score stay the Developer's.
func TestRedTeamQACannotWriteTheCandidate(t *testing.T) {
	dir := t.TempDir()
	h := &fakeHarness{devBroken: true, qaShell: `printf '#!/bin/sh\necho "Hello, World!"\n' > greet.sh`}
	s, err := runIn(dir, "hoh@1", h)
	if err != nil {
		t.Fatal(err)
	}
	if h.qaShellErr == nil || !strings.Contains(h.qaShellErr.Error(), "Read-only file system") {
		t.Fatalf("QA's write into the candidate was not refused: %v", h.qaShellErr)
	}
	// The candidate QA assessed is cp-1; its snapshot is not kept.
	if data := testenv.GitShow(t, runrecord.TrialLayout{Dir: dir}.GitDir(), "cp-1:greet.sh"); !strings.Contains(data, "nope") {
		t.Fatalf("cp-1 changed: %q", data)
	}
	if _, err := os.Stat(filepath.Join(runrecord.TrialLayout{Dir: dir}.Stage(1, "qa"), "candidate")); !os.IsNotExist(err) {
		t.Fatalf("the candidate snapshot is kept (%v): the next Developer's writes would change it", err)
	}
	if len(s.Violations) != 0 {
		t.Fatalf("a refused write needs no violation: %v", s.Violations)
	}
}

// Red-team: on the host QA's candidate is the workspace mounted read-only
// at the candidate's place, which on the host is an empty directory. A
// write there from outside the view reaches neither the workspace nor the
// history nor the stage's records, and the score is the Developer's.
func TestRedTeamAWriteUnderTheDirectCandidateNeverReachesTheArtifact(t *testing.T) {
	dir := t.TempDir()
	h := &fakeHarness{devBroken: true, qaRepairs: true}
	s, err := runIn(dir, "hoh@1", h)
	if err != nil {
		t.Fatal(err)
	}
	l := runrecord.TrialLayout{Dir: dir}
	if data := testenv.GitShow(t, l.GitDir(), "HEAD:greet.sh"); !strings.Contains(data, "nope") {
		t.Fatalf("QA's repair is in the history: %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(l.Workspace(), "greet.sh")); !strings.Contains(string(data), "nope") {
		t.Fatalf("QA's repair is in the workspace: %q", data)
	}
	if _, err := os.Stat(filepath.Join(l.Stage(1, "qa"), "candidate")); !os.IsNotExist(err) {
		t.Fatalf("what was written at the candidate's place is kept (%v)", err)
	}
	if len(s.Violations) != 0 || s.Checkpoints[0].Metrics["pass_rate"] == 100 {
		t.Fatalf("violations %v, score %v: want none, and the broken Developer's score", s.Violations, s.Checkpoints[0].Metrics)
	}
}

// Red-team: where no read-only view exists (a write from outside it, as in a
// container, whose roles see snapshots of the workspace), a QA that repairs the candidate is caught after the stage: a
// recorded violation, its verified claims demoted, the retained candidate
// the assessed one and the score the Developer's artifact's.
func TestRedTeamQARepairingTheCandidateIsAViolation(t *testing.T) {
	dir := t.TempDir()
	h := &fakeHarness{devBroken: true, qaRepairs: true}
	s, err := runInOn(dir, "hoh@1", h, unconfined{})
	if err != nil {
		t.Fatal(err)
	}
	// The candidate is a snapshot of the workspace: the write reached both,
	// and both are violations, undone.
	if len(s.Violations) != 2 || !strings.Contains(s.Violations[0], "QA Tester changed the candidate") || !strings.Contains(s.Violations[1], "changed the frozen candidate") {
		t.Fatalf("violations %v", s.Violations)
	}
	qa := runrecord.TrialLayout{Dir: dir}.Stage(1, "qa")
	if data := testenv.GitShow(t, runrecord.TrialLayout{Dir: dir}.GitDir(), "HEAD:greet.sh"); !strings.Contains(data, "nope") {
		t.Fatalf("QA's repair is in the history: %q", data)
	}
	var ev struct {
		Verified []any `json:"verified_records"`
	}
	b, _ := os.ReadFile(filepath.Join(qa, "evidence.json"))
	if err := json.Unmarshal(b, &ev); err != nil || len(ev.Verified) != 0 {
		t.Fatalf("claims on a repaired candidate kept as verified: %s", b)
	}
	if s.Checkpoints[0].Metrics["pass_rate"] == 100 {
		t.Fatal("score of QA's repair recorded")
	}
}

// Red-team: a QA Tester claims "verified" for a command its CLI never ran.
// The tool log backs nothing, so the claim is a gap with a note and the
// status is recomputed from the partition.
func TestRedTeamQAClaimWithoutAToolLogIsAGap(t *testing.T) {
	dir := t.TempDir()
	if _, err := runIn(dir, "hoh@1", &fakeHarness{qaClaimsUnrun: true}); err != nil {
		t.Fatal(err)
	}
	var ev struct {
		Status   string   `json:"qa_status"`
		Verified []any    `json:"verified_records"`
		Notes    []string `json:"normalisation_notes"`
	}
	b, _ := os.ReadFile(filepath.Join(runrecord.TrialLayout{Dir: dir}.Stage(1, "qa"), "evidence.json"))
	if err := json.Unmarshal(b, &ev); err != nil || len(ev.Verified) != 0 || ev.Status == "pass" ||
		!strings.Contains(strings.Join(ev.Notes, "\n"), "tool log shows no command") {
		t.Fatalf("an unbacked claim kept: %s", b)
	}
}

// A kept evaluation copy git cannot work with (here a corrupt index) does
// not cost the score: the checkpoint is evaluated on a fresh export, and no
// evaluation copy is left once every checkpoint is scored.
func TestEvaluationCopyGitCannotUseFallsBackToAFreshExport(t *testing.T) {
	dir := t.TempDir()
	l := runrecord.TrialLayout{Dir: dir}
	os.MkdirAll(l.Private(), 0o700)
	os.WriteFile(filepath.Join(l.Private(), "evaluated.index"), []byte("not an index"), 0o600)
	s, err := runIn(dir, "hoh@2", &fakeHarness{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Checkpoints) != 2 || s.Checkpoints[0].Metrics["pass_rate"] != 100 || s.Checkpoints[1].Metrics["pass_rate"] != 100 {
		t.Fatalf("checkpoints %+v", s.Checkpoints)
	}
	ents, _ := os.ReadDir(l.Private())
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "eval") && e.Name() != "evaluation.key" {
			t.Errorf("%s left in the private directory", e.Name())
		}
	}
}

// repairingChecks is a benchmark whose public checks run a hostile
// artifact: each check finds what the last one left in its copy, then
// repairs greet.sh there and plants a file.
type repairingChecks struct {
	builtin.Benchmark
	found []string // per check: "planted" and/or "repaired" when seen on entry
}

func (b *repairingChecks) Check(ctx context.Context, task benchmark.Task, dir string) ([]runrecord.CheckResult, error) {
	var seen []string
	if _, err := os.Stat(filepath.Join(dir, "planted.txt")); err == nil {
		seen = append(seen, "planted")
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "greet.sh")); string(data) == greet {
		seen = append(seen, "repaired")
	}
	b.found = append(b.found, strings.Join(seen, ","))
	if err := os.WriteFile(filepath.Join(dir, "greet.sh"), []byte(greet), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "planted.txt"), []byte("x"), 0o644); err != nil {
		return nil, err
	}
	return b.Benchmark.Check(ctx, task, dir)
}

// Red-team: the runtime checks' copy is kept between checks and
// evaluations (only changed files are written), so what a check writes
// there must never reach the workspace, the history, a later check or an
// evaluation: each starts from the Developer's commit exactly.
func TestRedTeamChecksWritingTheirCopyChangeNothing(t *testing.T) {
	dir := t.TempDir()
	b := &repairingChecks{}
	ts, _ := b.Tasks(context.Background())
	spec := runrecord.TrialSpec{Key: "builtin/greet", Benchmark: "builtin", Task: "greet", Config: "fake", Arm: runrecord.Arm{Condition: "hoh", Checkpoint: 2}, Rep: 1}
	s, err := Run(context.Background(), dir, spec, NewEnv(
		Policy{},
		Place{Bench: b, Task: ts[0]},
		Route{},
		&fakeHarness{devBroken: true},
		Mode{},
	))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.found) != 2 || b.found[0] != "" || b.found[1] != "" {
		t.Fatalf("a check saw what the last one left: %q", b.found)
	}
	for _, cp := range s.Checkpoints {
		if cp.Metrics["pass_rate"] == 100 {
			t.Fatalf("checkpoint %d scored the check's repair: %+v", cp.Step, cp)
		}
	}
	l := runrecord.TrialLayout{Dir: dir}
	if data, _ := os.ReadFile(filepath.Join(l.Workspace(), "greet.sh")); string(data) == greet {
		t.Fatal("the check's repair reached the workspace")
	}
	if _, err := os.Stat(filepath.Join(l.Workspace(), "planted.txt")); !os.IsNotExist(err) {
		t.Fatalf("the check's file reached the workspace: %v", err)
	}
	if got := testenv.GitShow(t, l.GitDir(), "cp-2:greet.sh"); got == greet {
		t.Fatal("the check's repair reached the history")
	}
}
