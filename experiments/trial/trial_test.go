package trial

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark/builtin"
	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/experiments/history"
	"github.com/hoh-research/hoh/experiments/served"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/runrecord"
)

// fakeHarness is an in-process test double for a coding-agent CLI: it reads
// the role from the prompt and acts like a well-behaved agent, unless told
// to misbehave. Real CLIs are exercised by the integration tests.
type fakeHarness struct {
	mu       sync.Mutex
	calls    []call
	sessions int
	// badPlans: the first n planner replies violate the contract.
	badPlans int
	// qaWritesTo: the QA Tester writes into this directory (the authoritative workspace).
	qaWritesTo string
	// infraAt: fail with an infrastructure error on this call number (1-based), once.
	infraAt int
	// badPlanAt: every planner reply of these iterations violates the contract.
	badPlanAt map[int]bool
	// prose: replies of these roles are prose, not the contract's JSON.
	prose            map[runrecord.Role]bool
	plannerIteration int
	// devBroken: the developer writes a greet.sh that fails the hidden tests.
	devBroken bool
	// devWrites: files (relative to the developer's working directory, may
	// climb out of it) the developer writes besides its artifact, as an
	// agent's shell step would.
	devWrites map[string]string
	// qaRepairs: the QA Tester rewrites greet.sh in its working directory
	// (the candidate) into a correct one with a direct file write, as a
	// process outside any read-only view would.
	qaRepairs bool
	// qaShell: a shell step the QA Tester runs in its working directory
	// through the invocation's executor; its result goes to qaShellErr.
	qaShell    string
	qaShellErr error
	// devShell: a shell step the developer runs in its working directory
	// through the invocation's executor; its result goes to devShellErr.
	devShell    string
	devShellErr error
	// qaReply replaces the QA Tester's reply.
	qaReply string
	// qaClaimsUnrun: the QA Tester's reply claims a command its tool log
	// does not show (by default the fake reports running the command its
	// verified claim names, as a CLI's event stream would).
	qaClaimsUnrun bool
	// shells: a shell step each role runs in its working directory through
	// the invocation's executor (its view); output and exit in shellOut.
	shells   map[runrecord.Role]string
	shellOut map[runrecord.Role][]string
	// digestTime: spent in the fake's own digests (startDigest), not hoh's.
	digestTime time.Duration
	// think: how long each invocation takes, as a model's turn would.
	think time.Duration
}

// shell runs script in the invocation's working directory through its
// executor, as a CLI's shell tool would.
func shell(inv harness.Invocation, script string) error {
	ex := inv.Exec
	if ex == nil {
		ex = sandbox.Local{}
	}
	var out bytes.Buffer
	exit, err := ex.Run(context.Background(), sandbox.Command{Args: []string{"/bin/sh", "-c", script}, Dir: inv.WorkDir, Stdout: &out, Stderr: &out})
	if err == nil && exit.Code != 0 {
		err = fmt.Errorf("exit %d: %s", exit.Code, out.String())
	}
	return err
}

var iterationRE = regexp.MustCompile(`HoH iteration (\d+)\)`)

func promptIteration(p string) int {
	m := iterationRE.FindStringSubmatch(p)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

type call struct {
	inv          harness.Invocation
	startDigest  string
	usage        runrecord.Usage
	responseText string
}

const greet = "#!/bin/sh\nif [ $# -eq 0 ]; then echo 'Hello, World!'; else echo \"Hello, $*!\"; fi\n"

func (f *fakeHarness) Name() string    { return "fake" }
func (f *fakeHarness) Version() string { return "0" }

func (f *fakeHarness) Run(_ context.Context, inv harness.Invocation) (runrecord.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	time.Sleep(f.think)
	began := time.Now()
	d, _ := history.Digest(inv.WorkDir)
	f.digestTime += time.Since(began)
	n := len(f.calls) + 1
	u := runrecord.Usage{Input: int64(100 * n), CachedInput: 10, Output: int64(7 * n), Total: int64(107 * n)}
	res := runrecord.Result{Outcome: runrecord.OutcomeCompleted, Usage: u, Duration: time.Millisecond}
	if n == f.infraAt {
		f.infraAt = 0
		res.Outcome, res.Evidence = runrecord.OutcomeInfraFailure, "HTTP 503 from provider"
		f.calls = append(f.calls, call{inv: inv, startDigest: d, usage: u})
		return res, nil
	}
	if inv.Session != "" {
		res.SessionID = inv.Session
	} else {
		f.sessions++
		res.SessionID = fmt.Sprintf("session-%d", f.sessions)
	}
	if script := f.shells[inv.Role]; script != "" {
		var out bytes.Buffer
		exit, err := inv.Exec.Run(context.Background(), sandbox.Command{Args: []string{"/bin/sh", "-c", script}, Dir: inv.WorkDir, Stdout: &out, Stderr: &out})
		if f.shellOut == nil {
			f.shellOut = map[runrecord.Role][]string{}
		}
		f.shellOut[inv.Role] = append(f.shellOut[inv.Role], fmt.Sprintf("%s[exit %d %v]", out.String(), exit.Code, err))
	}
	p := inv.Prompt
	switch {
	case strings.Contains(p, "Role: Project Planner") || inv.Role == runrecord.RolePlanner:
		// A contract retry in the same session carries no iteration header.
		if it := promptIteration(p); it > 0 {
			f.plannerIteration = it
		}
		if f.badPlans > 0 || f.badPlanAt[f.plannerIteration] {
			if f.badPlans > 0 {
				f.badPlans--
			}
			res.FinalMessage = `{"objective": ""}`
		} else {
			res.FinalMessage = fmt.Sprintf(`{"objective":"increment %d","tasks":[{"id":"T1","description":"write greet.sh"}],"preserve":[],"acceptance":[{"id":"R1","requirement":"greets","observation":"run it"}]}`, n)
		}
	case inv.Role == runrecord.RoleQA:
		if f.qaRepairs {
			os.WriteFile(filepath.Join(inv.WorkDir, "greet.sh"), []byte(greet), 0o755)
		}
		if f.qaShell != "" {
			f.qaShellErr = shell(inv, f.qaShell)
		}
		if f.qaWritesTo != "" {
			os.WriteFile(filepath.Join(f.qaWritesTo, "greet.sh"), []byte("echo tampered\n"), 0o755)
		}
		if f.qaShell != "" {
			res.Tools = append(res.Tools, runrecord.ToolCall{Name: "bash", Input: fmt.Sprintf(`{"command":%q}`, f.qaShell)})
		}
		if !f.qaClaimsUnrun {
			res.Tools = append(res.Tools, runrecord.ToolCall{Name: "command_execution", Input: "/bin/bash -lc 'sh greet.sh Ada'"})
		}
		res.FinalMessage = `{"iteration":1,"qa_status":"partial","verified_records":[{"claim_id":"c1","claim":"greets Ada","status":"verified","execution_records":[{"type":"command","command":"sh greet.sh Ada","observation":"Hello, Ada!"}]}],"gap_records":[{"claim_id":"c2","claim":"no styling","status":"gap","recommended_update":"QA-EVIDENCE-MARKER"}]}`
		if f.qaReply != "" {
			res.FinalMessage = f.qaReply
		}
	default: // developer, vanilla, continuation
		body := greet
		if f.devBroken {
			body = "#!/bin/sh\necho nope\n"
		}
		os.WriteFile(filepath.Join(inv.WorkDir, "greet.sh"), []byte(body), 0o755)
		if f.devShell != "" {
			f.devShellErr = shell(inv, f.devShell)
		}
		for rel, data := range f.devWrites {
			p := filepath.Join(inv.WorkDir, rel)
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(data), 0o644)
		}
		os.WriteFile(filepath.Join(inv.WorkDir, fmt.Sprintf("pass-%d.txt", n)), []byte("x"), 0o644)
		res.FinalMessage = `{"summary":"wrote greet.sh","self_tests":[{"command":"sh greet.sh","outcome":"ok"}]}`
	}
	if f.prose[inv.Role] {
		res.FinalMessage = "All done: I had a look and made the changes I thought best."
	}
	f.calls = append(f.calls, call{inv: inv, startDigest: d, usage: u, responseText: res.FinalMessage})
	return res, nil
}

func (f *fakeHarness) byRole(r runrecord.Role) []call {
	var out []call
	for _, c := range f.calls {
		if c.inv.Role == r {
			out = append(out, c)
		}
	}
	return out
}

func runTrial(t *testing.T, arm string, h harness.Harness) (*runrecord.Summary, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := runIn(dir, arm, h)
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

func runIn(dir, arm string, h harness.Harness) (*runrecord.Summary, error) {
	return runInOn(dir, arm, h, nil)
}

// runInOn is runIn with the roles run by exec (nil: confined on the host).
func runInOn(dir, arm string, h harness.Harness, exec sandbox.Executor) (*runrecord.Summary, error) {
	b := builtin.Benchmark{}
	ts, _ := b.Tasks(context.Background())
	spec := runrecord.TrialSpec{Key: "builtin/greet", Benchmark: "builtin", Task: "greet", Config: "fake", Rep: 1}
	if err := spec.Arm.UnmarshalText([]byte(arm)); err != nil {
		return nil, err
	}
	return Run(context.Background(), dir, spec, NewEnv(
		Policy{},
		Place{Bench: b, Task: ts[0], Exec: exec},
		Route{},
		h,
		Mode{},
	))
}

// unconfined is an executor RoleExecutor passes through as it is (as a
// task container's): the read-only stages then see hard-link snapshots of
// the workspace, not the workspace mounted read-only.
type unconfined struct{ sandbox.Local }

func TestHoHRunsAllRolesAndEvaluatesEveryCheckpoint(t *testing.T) {
	h := &fakeHarness{}
	s, dir := runTrial(t, "hoh@3", h)
	if s.Status != runrecord.StatusCompleted {
		t.Fatalf("status %s: %s", s.Status, s.Reason)
	}
	for _, r := range []runrecord.Role{runrecord.RolePlanner, runrecord.RoleDeveloper, runrecord.RoleQA} {
		if n := len(h.byRole(r)); n != 3 {
			t.Errorf("%s invoked %d times, want 3", r, n)
		}
	}
	if len(s.Checkpoints) != 3 || s.Checkpoints[2].Metrics["pass_rate"] != 100 {
		t.Fatalf("checkpoints %+v", s.Checkpoints)
	}
	// Planner t>1 sees E_{t-1}: its index names the evidence file.
	if p := h.byRole(runrecord.RolePlanner)[1].inv.Prompt; !strings.Contains(p, "evidence-1.json") {
		t.Errorf("planner 2 prompt lacks the evidence index:\n%s", p)
	}
	// Scores are in the record format, with cumulative tokens growing per checkpoint.
	rows, err := runrecord.ReadScores(filepath.Join(dir, "scores.csv"))
	if err != nil || len(rows) != 3 {
		t.Fatalf("scores: %v %+v", err, rows)
	}
	var want int64
	for i, c := range h.calls {
		if c.inv.Role == runrecord.RoleQA && len(h.byRole(runrecord.RoleQA)) > 0 {
			_ = i
		}
		want += c.usage.Input + c.usage.Output
	}
	if got := rows[2].Tokens; int64(got) != want {
		t.Errorf("HoH@3 cumulative tokens %v, want %d", got, want)
	}
	if s.Usage.Total != sumTotal(h) {
		t.Errorf("ledger total %d, harness served %d", s.Usage.Total, sumTotal(h))
	}
	// Every checkpoint is tagged and restorable.
	repo, _ := history.Open(runrecord.TrialLayout{Dir: dir}.GitDir(), runrecord.TrialLayout{Dir: dir}.Workspace())
	log, _ := repo.Log()
	tags := 0
	for _, e := range log {
		tags += len(e.Tags)
	}
	if tags != 4 { // cp-0..cp-3
		t.Errorf("want 4 checkpoint tags, got %d in %+v", tags, log)
	}
}

func sumTotal(h *fakeHarness) int64 {
	var n int64
	for _, c := range h.calls {
		n += c.usage.Total
	}
	return n
}

func TestWithoutPlanUpdateReusesD1ByteForByte(t *testing.T) {
	h := &fakeHarness{}
	_, dir := runTrial(t, "wo-plan-update@3", h)
	if n := len(h.byRole(runrecord.RolePlanner)); n != 1 {
		t.Fatalf("planner invoked %d times, want 1", n)
	}
	l := runrecord.TrialLayout{Dir: dir}
	d1, _ := os.ReadFile(filepath.Join(l.Stage(1, "planner"), "plan.json"))
	for _, it := range []int{2, 3} {
		dt, err := os.ReadFile(filepath.Join(l.Stage(it, "planner"), "plan.json"))
		if err != nil || !bytes.Equal(d1, dt) {
			t.Fatalf("D_%d differs from D_1 (%v)", it, err)
		}
	}
	if n := len(h.byRole(runrecord.RoleQA)); n != 3 {
		t.Fatalf("QA must still run every iteration, ran %d", n)
	}
}

func TestWithoutEvidenceFeedbackWithholdsEvidence(t *testing.T) {
	h := &fakeHarness{}
	_, dir := runTrial(t, "wo-evidence-feedback@3", h)
	planners := h.byRole(runrecord.RolePlanner)
	if len(planners) != 3 || len(h.byRole(runrecord.RoleQA)) != 3 {
		t.Fatalf("planner %d, qa %d", len(planners), len(h.byRole(runrecord.RoleQA)))
	}
	for i, c := range planners {
		for _, bad := range []string{"QA-EVIDENCE-MARKER", "evidence-", "Evidence from"} {
			if strings.Contains(c.inv.Prompt, bad) {
				t.Errorf("planner %d prompt contains %q", i+1, bad)
			}
		}
	}
	// Nor may the planner's context directories hold evidence files.
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if strings.Contains(p, "/planner/") && strings.Contains(filepath.Base(p), "evidence") {
			t.Errorf("evidence file in planner context: %s", p)
		}
		return nil
	})
}

func TestWithoutWarmStartStartsEveryPassFromA0(t *testing.T) {
	h := &fakeHarness{}
	_, dir := runTrial(t, "wo-warm-start@3", h)
	b := builtin.Benchmark{}
	ts, _ := b.Tasks(context.Background())
	a0 := t.TempDir()
	b.InitialWorkspace(context.Background(), ts[0], a0)
	want, _ := history.Digest(a0)
	devs := h.byRole(runrecord.RoleDeveloper)
	if len(devs) != 3 {
		t.Fatalf("%d developer passes", len(devs))
	}
	for i, c := range devs {
		if c.startDigest != want {
			t.Errorf("developer pass %d started at %s, want A_0 %s", i+1, c.startDigest, want)
		}
	}
	// The record says so too: the restore to A_0 is not mistaken for the
	// last commit's workspace (startDigest).
	for _, st := range stages(t, dir) {
		if st.Role == runrecord.RoleDeveloper && st.StartDigest != want {
			t.Errorf("developer %d's record starts at %s, want A_0 %s", st.Iteration, st.StartDigest, want)
		}
	}
	// Planning still uses evidence.
	if p := h.byRole(runrecord.RolePlanner)[2].inv.Prompt; !strings.Contains(p, "evidence-2.json") {
		t.Error("w/o Warm-Start planner must still see evidence")
	}
}

func TestVanillaContinuationResumesTheSameSession(t *testing.T) {
	h := &fakeHarness{}
	s, _ := runTrial(t, "vanilla-continuation@3", h)
	devs := h.byRole(runrecord.RoleDeveloper)
	if len(devs) != 3 || len(h.calls) != 3 {
		t.Fatalf("want 3 developer passes and nothing else, got %d calls", len(h.calls))
	}
	if devs[0].inv.Session != "" || devs[1].inv.Session != "session-1" || devs[2].inv.Session != "session-1" {
		t.Fatalf("sessions: %q %q %q", devs[0].inv.Session, devs[1].inv.Session, devs[2].inv.Session)
	}
	if devs[1].inv.StateDir != devs[0].inv.StateDir {
		t.Fatal("continuation must reuse the CLI state directory")
	}
	ts, _ := builtin.Benchmark{}.Tasks(context.Background())
	if strings.TrimSpace(devs[0].inv.Prompt) != strings.TrimSpace(ts[0].Spec) || !strings.HasPrefix(devs[1].inv.Prompt, "Continue developing") {
		t.Fatal("pass 1 is the Vanilla pass (the specification alone), later passes the fixed continuation instruction")
	}
	if len(s.Checkpoints) != 3 {
		t.Fatalf("every pass is a checkpoint, got %d", len(s.Checkpoints))
	}
}

func TestPlannerThatNeverSatisfiesItsContractLeavesEveryCheckpoint(t *testing.T) {
	h := &fakeHarness{badPlans: 100}
	s, dir := runTrial(t, "hoh@2", h)
	if s.Status != runrecord.StatusCompleted || len(s.RoleFailures) != 2 || !strings.Contains(s.RoleFailures[0], "objective is empty") {
		t.Fatalf("status %s role failures %q", s.Status, s.RoleFailures)
	}
	planners := h.byRole(runrecord.RolePlanner)
	if len(planners) != 6 {
		t.Fatalf("want 1 attempt + 2 retries per iteration, got %d", len(planners))
	}
	if !strings.Contains(planners[1].inv.Prompt, "did not satisfy the output contract") {
		t.Error("retry prompt must carry the validation errors")
	}
	if _, err := os.Stat(filepath.Join(runrecord.TrialLayout{Dir: dir}.Stage(1, "planner"), "plan.json")); !os.IsNotExist(err) {
		t.Error("no plan may be written (never replaced by a template)")
	}
	devs := h.byRole(runrecord.RoleDeveloper)
	if len(devs) != 2 || len(s.Checkpoints) != 2 || s.Checkpoints[1].Metrics == nil {
		t.Fatalf("the loop goes on without a document: %d developer passes, checkpoints %+v", len(devs), s.Checkpoints)
	}
	if !strings.Contains(devs[0].inv.Prompt, "produced no development document") || strings.Contains(devs[0].inv.Prompt, "plan.md") {
		t.Errorf("the Developer must be told it has no document:\n%s", devs[0].inv.Prompt)
	}
	for _, st := range stages(t, dir) {
		if st.Role == "developer" && st.PlanFrom != 0 {
			t.Errorf("developer %d recorded plan_from %d, want 0", st.Iteration, st.PlanFrom)
		}
	}
}

func TestPlannerFailureAtT2GivesTheDeveloperTheLastValidDocument(t *testing.T) {
	h := &fakeHarness{badPlanAt: map[int]bool{2: true}}
	s, dir := runTrial(t, "hoh@3", h)
	if s.Status != runrecord.StatusCompleted || len(s.Checkpoints) != 3 || len(s.RoleFailures) != 1 {
		t.Fatalf("status %s, %d checkpoints, role failures %q", s.Status, len(s.Checkpoints), s.RoleFailures)
	}
	for _, cp := range s.Checkpoints {
		if cp.Metrics["pass_rate"] != 100 {
			t.Errorf("checkpoint %d not evaluated: %+v", cp.Step, cp)
		}
	}
	want := map[int]int{1: 1, 2: 1, 3: 3}
	for _, st := range stages(t, dir) {
		if st.Role == "developer" && st.PlanFrom != want[st.Iteration] {
			t.Errorf("developer %d got D_%d, want D_%d", st.Iteration, st.PlanFrom, want[st.Iteration])
		}
	}
	dev2 := h.byRole(runrecord.RoleDeveloper)[1].inv.Prompt
	if !strings.Contains(dev2, filepath.Join("iter-01", "planner", "plan.md")) || !strings.Contains(dev2, "continue with D_1") {
		t.Errorf("developer 2 must get D_1 and be told so:\n%s", dev2)
	}
	qa2 := h.byRole(runrecord.RoleQA)[1].inv.Prompt
	if !strings.Contains(qa2, filepath.Join("iter-01", "planner", "plan.md")) {
		t.Errorf("QA 2 must get the document the Developer worked to:\n%s", qa2)
	}
}

func TestDeveloperAndQAFailuresAreRecordedAndTheLoopGoesOn(t *testing.T) {
	h := &fakeHarness{prose: map[runrecord.Role]bool{runrecord.RoleDeveloper: true, runrecord.RoleQA: true}}
	s, dir := runTrial(t, "hoh@2", h)
	if s.Status != runrecord.StatusCompleted || len(s.Checkpoints) != 2 || len(s.RoleFailures) != 4 {
		t.Fatalf("status %s, %d checkpoints, role failures %q", s.Status, len(s.Checkpoints), s.RoleFailures)
	}
	if s.Checkpoints[0].Metrics["pass_rate"] != 100 {
		t.Fatal("the developer's files are A_1 even though its report failed")
	}
	var ev map[string]any
	data, err := os.ReadFile(filepath.Join(runrecord.TrialLayout{Dir: dir}.Stage(1, "qa"), "evidence.json"))
	if err != nil || json.Unmarshal(data, &ev) != nil || ev["qa_status"] != "unavailable" || !strings.Contains(string(data), "violated its contract") {
		t.Fatalf("a failed QA Tester's evidence must say so: %s %v", data, err)
	}
	if p := h.byRole(runrecord.RolePlanner)[1].inv.Prompt; !strings.Contains(p, "QA status unavailable") {
		t.Errorf("planner 2 gets the unavailable evidence:\n%s", p)
	}
}

func TestVanillaIsOnePlainPassWhateverItReplies(t *testing.T) {
	h := &fakeHarness{prose: map[runrecord.Role]bool{runrecord.RoleDeveloper: true}}
	s, dir := runTrial(t, "vanilla", h)
	if len(h.calls) != 1 {
		t.Fatalf("Vanilla must be exactly one invocation, got %d", len(h.calls))
	}
	if s.Status != runrecord.StatusCompleted || len(s.RoleFailures) != 0 || len(s.Checkpoints) != 1 || s.Checkpoints[0].Metrics["pass_rate"] != 100 {
		t.Fatalf("a prose reply is a normal Vanilla result: %+v", s)
	}
	msg, err := os.ReadFile(filepath.Join(runrecord.TrialLayout{Dir: dir}.Stage(1, "developer"), "final-message.md"))
	if err != nil || !strings.Contains(string(msg), "All done") {
		t.Fatalf("the final message is kept as text: %q %v", msg, err)
	}
	if strings.Contains(h.calls[0].inv.Prompt, "JSON") || strings.Contains(h.calls[0].inv.Prompt, "Boundaries") {
		t.Fatalf("no hoh contract in the Vanilla prompt:\n%s", h.calls[0].inv.Prompt)
	}
}

func TestExtendingHoH2ToHoH3RunsOnlyIteration3(t *testing.T) {
	dir := t.TempDir()
	h := &fakeHarness{}
	if _, err := runIn(dir, "hoh@2", h); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "evaluation", "cp-2.json"))
	s, err := runIn(dir, "hoh@3", h)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.calls) != 9 {
		t.Fatalf("extension ran %d more invocations, want 3", len(h.calls)-6)
	}
	for _, c := range h.calls[6:] {
		if promptIteration(c.inv.Prompt) != 3 {
			t.Errorf("extension invoked %s at iteration %d", c.inv.Role, promptIteration(c.inv.Prompt))
		}
	}
	if p := h.calls[6].inv.Prompt; !strings.Contains(p, "evidence-2.json") {
		t.Error("planner 3 continues from E_2")
	}
	if h.calls[7].startDigest != mustDigestOfCommit(t, dir, "cp-2") {
		t.Error("developer 3 continues from A_2")
	}
	if len(s.Checkpoints) != 3 || len(s.Extensions) != 1 || s.Extensions[0].From != 2 || s.Extensions[0].To != 3 {
		t.Fatalf("checkpoints %d, extensions %+v", len(s.Checkpoints), s.Extensions)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "evaluation", "cp-2.json"))
	if !bytes.Equal(before, after) {
		t.Error("existing checkpoints are not re-evaluated")
	}
	if _, err := runIn(dir, "hoh@2", h); err == nil || !strings.Contains(err.Error(), "lowering") {
		t.Fatalf("lowering T must be refused, got %v", err)
	}
	if _, err := runIn(dir, "wo-warm-start@4", h); err == nil {
		t.Fatal("another condition in the same directory must be refused")
	}
}

func mustDigestOfCommit(t *testing.T, dir, ref string) string {
	t.Helper()
	l := runrecord.TrialLayout{Dir: dir}
	repo, err := history.Open(l.GitDir(), l.Workspace())
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	if err := repo.Export(ref, tmp); err != nil {
		t.Fatal(err)
	}
	d, _ := history.Digest(tmp)
	return d
}

func TestVanillaExtendedToContinuationResumesItsSession(t *testing.T) {
	dir := t.TempDir()
	h := &fakeHarness{prose: map[runrecord.Role]bool{runrecord.RoleDeveloper: true}}
	if _, err := runIn(dir, "vanilla", h); err != nil {
		t.Fatal(err)
	}
	s, err := runIn(dir, "vanilla-continuation@3", h)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.calls) != 3 || h.calls[1].inv.Session != "session-1" || h.calls[2].inv.Session != "session-1" {
		t.Fatalf("passes 2 and 3 must resume the Vanilla session, got %d calls", len(h.calls))
	}
	rows, err := runrecord.ReadScores(filepath.Join(dir, "scores.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var arms []string
	for _, r := range rows {
		arms = append(arms, r.Arm().String())
	}
	if strings.Join(arms, ",") != "vanilla,vanilla-continuation@2,vanilla-continuation@3" || rows[1].Tokens <= rows[0].Tokens {
		t.Fatalf("rows %v: pass 1 is the Vanilla row, passes 2..3 continue it (cumulative tokens)", arms)
	}
	if len(s.Checkpoints) != 3 {
		t.Fatalf("checkpoints %d", len(s.Checkpoints))
	}
}

func TestMalformedPlannerRecoversWithinRetries(t *testing.T) {
	h := &fakeHarness{badPlans: 1}
	s, _ := runTrial(t, "hoh@1", h)
	if s.Status != runrecord.StatusCompleted || len(h.byRole(runrecord.RolePlanner)) != 2 {
		t.Fatalf("status %s, %d planner calls", s.Status, len(h.byRole(runrecord.RolePlanner)))
	}
}

// A write into the workspace from outside QA's view is caught after the
// stage and undone, and QA's verified claims are not about the candidate.
// On the host QA's candidate is the workspace itself (one violation); where
// it is a hard-link snapshot (a container's view), the write changed both.
func TestQAWritingIntoTheCandidateIsCaughtAndUndone(t *testing.T) {
	for _, c := range []struct {
		name       string
		exec       sandbox.Executor
		violations int
	}{{"host", nil, 1}, {"snapshot", unconfined{}, 2}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			h := &fakeHarness{qaWritesTo: runrecord.TrialLayout{Dir: dir}.Workspace()}
			s, err := runInOn(dir, "hoh@1", h, c.exec)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Violations) != c.violations || !strings.Contains(s.Violations[0], "QA Tester changed the candidate") ||
				(c.violations == 2 && !strings.Contains(s.Violations[1], "changed the frozen candidate")) {
				t.Fatalf("violations %v", s.Violations)
			}
			data, _ := os.ReadFile(filepath.Join(runrecord.TrialLayout{Dir: dir}.Workspace(), "greet.sh"))
			if string(data) != greet {
				t.Fatalf("candidate not restored: %q", data)
			}
			var ev runrecord.Evidence
			if err := runrecord.ReadJSON(runrecord.TrialLayout{Dir: dir}.StageFiles(1, runrecord.RoleQA).Evidence(), &ev); err != nil || len(ev.Verified) != 0 {
				t.Fatalf("claims on a changed candidate kept as verified: %+v (%v)", ev.Verified, err)
			}
			if s.Checkpoints[0].Metrics["pass_rate"] != 100 {
				t.Fatal("the evaluated checkpoint must be the Developer's A_1")
			}
		})
	}
}

func TestInfraFailureResumesFromLastCommittedStage(t *testing.T) {
	dir := t.TempDir()
	h := &fakeHarness{infraAt: 5} // planner1, dev1, qa1, planner2, dev2 <- fails
	_, err := runIn(dir, "hoh@2", h)
	if !IsInfra(err) {
		t.Fatalf("want an infrastructure error, got %v", err)
	}
	// The interrupted stage left a file; resume must drop it and rerun only dev2, qa2.
	os.WriteFile(filepath.Join(runrecord.TrialLayout{Dir: dir}.Workspace(), "half-written.txt"), []byte("x"), 0o644)
	s, err := runIn(dir, "hoh@2", h)
	if err != nil || s.Status != runrecord.StatusCompleted {
		t.Fatalf("resume: %v %+v", err, s)
	}
	if len(h.calls) != 7 {
		t.Fatalf("want 7 invocations (5 + dev2 + qa2), got %d", len(h.calls))
	}
	if _, err := os.Stat(filepath.Join(runrecord.TrialLayout{Dir: dir}.Workspace(), "half-written.txt")); !os.IsNotExist(err) {
		t.Fatal("resume must restore the last committed stage")
	}
	// The replaced attempt's logs are kept, but its tokens are not in the ledger.
	if _, err := os.Stat(filepath.Join(runrecord.TrialLayout{Dir: dir}.Stage(2, "developer"), "attempt-1", "result.json")); err != nil {
		t.Fatal("the failed attempt's record must be kept")
	}
	var want int64
	for i, c := range h.calls {
		if i != 4 {
			want += c.usage.Total
		}
	}
	if s.Usage.Total != want {
		t.Fatalf("ledger %d, want %d (replaced attempt excluded)", s.Usage.Total, want)
	}
	st, _ := loadState(runrecord.TrialLayout{Dir: dir})
	if len(st.stages) != 6 {
		t.Fatalf("want 6 committed stages, got %d", len(st.stages))
	}
}

func TestRelativeTrialDirectory(t *testing.T) {
	base := t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Chdir(base); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	s, err := runIn(filepath.Join("runs", "x"), "hoh@1", &fakeHarness{})
	if err != nil || s.Status != runrecord.StatusCompleted {
		t.Fatalf("relative trial dir: %v %+v", err, s)
	}
}

// A kill between the last stage's line in stages.jsonl and the ledger
// rewrite leaves usage.jsonl a stage behind, and no later stage rewrites it;
// the resume derives it again, so the ledger equals the summary.
func TestResumeRewritesALedgerLeftBehindByAKill(t *testing.T) {
	dir := t.TempDir()
	h := &fakeHarness{}
	want, err := runIn(dir, "hoh@2", h)
	if err != nil {
		t.Fatal(err)
	}
	l := runrecord.TrialLayout{Dir: dir}
	data, _ := os.ReadFile(l.Usage())
	lines := strings.SplitAfter(string(data), "\n")
	os.WriteFile(l.Usage(), []byte(strings.Join(lines[:5], "")), 0o644) // killed before the 6th rewrite,
	os.Remove(l.Summary())                                              // so before the summary
	s, err := runIn(dir, "hoh@2", h)
	if err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(l.Usage())
	var total int64
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var inv runrecord.Invocation
		if err := json.Unmarshal([]byte(line), &inv); err != nil {
			t.Fatal(err)
		}
		total += inv.Usage.Total
	}
	if total != s.Usage.Total || total != want.Usage.Total || strings.Count(string(data), "\n") != 6 {
		t.Errorf("ledger %d tokens in %d lines, summary %d, first run %d", total, strings.Count(string(data), "\n"), s.Usage.Total, want.Usage.Total)
	}
}

// An attempt killed with the run leaves its state (Codex shell_snapshots,
// OpenCode's opencode.db-wal) and logs unscrubbed; the resume deletes the
// state and scrubs the logs first.
func TestResumeScrubsTheStateOfKilledAttempts(t *testing.T) {
	dir := t.TempDir()
	key := "sk-killed-attempt-key-123"
	b := builtin.Benchmark{}
	ts, _ := b.Tasks(context.Background())
	spec := runrecord.TrialSpec{Key: "builtin/greet/hoh@1", Benchmark: "builtin", Task: "greet", Config: "fake", Arm: runrecord.Arm{Condition: "hoh", Checkpoint: 1}, Rep: 1}
	env := NewEnv(
		Policy{},
		Place{Bench: b, Task: ts[0]},
		Route{Secrets: []string{key}},
		&fakeHarness{infraAt: 2},
		Mode{},
	)
	if _, err := Run(context.Background(), dir, spec, env); !IsInfra(err) {
		t.Fatalf("want an infrastructure error, got %v", err)
	}
	killed := filepath.Join(runrecord.TrialLayout{Dir: dir}.Stage(1, "developer"), "attempt-9", "state")
	os.MkdirAll(killed, 0o755)
	os.WriteFile(filepath.Join(killed, "snapshot.sh"), []byte("export OPENAI_API_KEY="+key+"\n"), 0o644)
	os.WriteFile(filepath.Join(killed, "opencode.db-wal"), append([]byte("WAL\x00"), key...), 0o644)
	stderr := filepath.Join(filepath.Dir(killed), "logs", "stderr.log")
	os.MkdirAll(filepath.Dir(stderr), 0o755)
	os.WriteFile(stderr, []byte("auth with "+key+" failed\n"), 0o644)
	env.Harness = &fakeHarness{}
	if _, err := Run(context.Background(), dir, spec, env); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(killed); !os.IsNotExist(err) {
		t.Errorf("the killed attempt's CLI state is still there after the resume (%v)", err)
	}
	if data, _ := os.ReadFile(stderr); bytes.Contains(data, []byte(key)) || len(data) == 0 {
		t.Errorf("stderr.log after the resume: %q", data)
	}
	// No attempt keeps CLI state once its stage committed.
	if left, _ := filepath.Glob(filepath.Join(dir, "iter-*", "*", "attempt-*", "state")); len(left) > 0 {
		t.Errorf("CLI state left after the trial: %v", left)
	}
	testenv.AssertNoSecret(t, key, dir)
}

// hoh's relay is the ground truth of whether the model answered: an
// invocation the CLI calls completed while the relay logged no answer is an
// infrastructure failure; with the relay's answer logged it is a result.
func TestCompletionWithoutAModelAnswerIsInfrastructure(t *testing.T) {
	b := builtin.Benchmark{}
	ts, _ := b.Tasks(context.Background())
	spec := runrecord.TrialSpec{Key: "builtin/greet/vanilla", Benchmark: "builtin", Task: "greet", Config: "fake", Arm: runrecord.Arm{Condition: "vanilla", Checkpoint: 1}, Rep: 1}
	dir := t.TempDir()
	log := runrecord.TrialLayout{Dir: dir}.Served()
	_, err := Run(context.Background(), dir, spec, NewEnv(
		Policy{},
		Place{Bench: b, Task: ts[0]},
		Route{ServedLog: log},
		&fakeHarness{},
		Mode{},
	))
	if !IsInfra(err) || !StopsConfig(err) || CauseOf(err) != served.CauseNoRequest || !strings.Contains(err.Error(), "relay saw no model request") {
		t.Fatalf("want an infrastructure failure that stops the configuration, got %v", err)
	}
	if _, err := os.Stat(runrecord.TrialLayout{Dir: dir}.Summary()); err == nil {
		t.Fatal("a summary was written for an invocation nobody answered")
	}
	answering := &relayingHarness{fakeHarness: &fakeHarness{}, log: log}
	s, err := Run(context.Background(), dir, spec, NewEnv(
		Policy{},
		Place{Bench: b, Task: ts[0]},
		Route{ServedLog: log},
		answering,
		Mode{},
	))
	if err != nil || s.Status != runrecord.StatusCompleted {
		t.Fatalf("with the relay's answer logged: %v %+v", err, s)
	}
}

// No model turn, no score: an invocation during which the relay saw no
// successful model response (refused, 5xx only, silent, garbage) is an
// infrastructure failure whatever the CLI said; after an answer, a role
// failure stays the role's unless its last request failed on the
// provider's side or was held silent past half the idle timeout.
func TestNoModelTurnIsInfrastructure(t *testing.T) {
	b := builtin.Benchmark{}
	ts, _ := b.Tasks(context.Background())
	spec := runrecord.TrialSpec{Key: "builtin/greet/vanilla", Benchmark: "builtin", Task: "greet", Config: "fake", Arm: runrecord.Arm{Condition: "vanilla", Checkpoint: 1}, Rep: 1}
	answer := `"method":"POST","status":200,"events":3,"bytes":300,"complete":true`
	for _, c := range []struct {
		name    string
		lines   []string
		outcome runrecord.Outcome
		cause   string // "" : the CLI's outcome stands
	}{
		{"5xx until the timeout", []string{`"method":"POST","status":500,"bytes":20`}, runrecord.OutcomeTimeout, served.CauseFailed},
		{"503, the CLI gave up", []string{`"method":"POST","status":503,"bytes":20`}, runrecord.OutcomeAgentFailure, served.CauseFailed},
		{"refused", []string{`"method":"POST","status":401,"bytes":20`}, runrecord.OutcomeAgentFailure, served.CauseRefused},
		{"400 without a turn", []string{`"method":"POST","status":400,"bytes":20`}, runrecord.OutcomeAgentFailure, served.CauseRefused},
		{"silent", []string{`"method":"POST","status":499,"first_byte_ms":-1,"silent_ms":60000`}, runrecord.OutcomeTimeout, served.CauseSilent},
		{"garbage, the CLI completed", []string{`"method":"POST","status":200,"bytes":50,"complete":true`}, runrecord.OutcomeCompleted, served.CauseGarbage},
		{"only a probe", []string{`"method":"HEAD","status":200`}, runrecord.OutcomeCompleted, served.CauseNoRequest},
		// Bytes are not a model turn: 200 and a trickle of comment bytes
		// (never silent for half the idle timeout), headers only, or
		// keep-alives; whatever the CLI made of it, and on every request.
		{"trickle, the CLI completed", []string{`"method":"POST","status":200,"bytes":3,"max_gap_ms":20000,"silent_ms":61000`}, runrecord.OutcomeCompleted, served.CauseSilent},
		{"trickle until the timeout", []string{`"method":"POST","status":200,"bytes":3,"max_gap_ms":20000,"silent_ms":61000`}, runrecord.OutcomeTimeout, served.CauseSilent},
		{"headers only, then closed", []string{`"method":"POST","status":200,"first_byte_ms":-1,"complete":true`}, runrecord.OutcomeAgentFailure, served.CauseGarbage},
		{"headers only, twice", []string{`"method":"POST","status":200,"first_byte_ms":-1,"silent_ms":5000`, `"method":"POST","status":200,"first_byte_ms":-1,"silent_ms":5000`}, runrecord.OutcomeCompleted, served.CauseSilent},
		{"keep-alives", []string{`"method":"POST","status":200,"bytes":150,"max_gap_ms":1000,"silent_ms":1000`}, runrecord.OutcomeAgentFailure, served.CauseSilent},
		{"answered, then keep-alives past half the idle timeout", []string{answer, `"method":"POST","status":200,"events":2,"bytes":900,"max_gap_ms":1000,"silent_ms":40000`}, runrecord.OutcomeTimeout, served.CauseSilent},
		{"answered, then a timeout", []string{answer}, runrecord.OutcomeTimeout, ""},
		{"answered, then 400 (context too long)", []string{answer, `"method":"POST","status":400,"bytes":20`}, runrecord.OutcomeAgentFailure, ""},
		{"answered, then 500", []string{answer, `"method":"POST","status":500,"bytes":20`}, runrecord.OutcomeAgentFailure, served.CauseFailed},
		{"answered, then silent past half the idle timeout", []string{answer, `"method":"POST","status":499,"first_byte_ms":-1,"silent_ms":40000`}, runrecord.OutcomeTimeout, served.CauseSilent},
		{"answered, then slow streaming", []string{answer, `"method":"POST","status":200,"events":4,"bytes":900,"silent_ms":2000`}, runrecord.OutcomeTimeout, ""},
	} {
		dir := t.TempDir()
		log := runrecord.TrialLayout{Dir: dir}.Served()
		h := &failingProviderHarness{lines: c.lines, outcome: c.outcome, log: log}
		_, err := Run(context.Background(), dir, spec, NewEnv(
			Policy{Timeouts: Timeouts{Idle: time.Minute}},
			Place{Bench: b, Task: ts[0]},
			Route{ServedLog: log},
			h,
			Mode{},
		))
		if got := CauseOf(err); got != c.cause {
			t.Errorf("%s: cause %q (%v), want %q", c.name, got, err, c.cause)
			continue
		}
		if c.cause != "" && (!strings.Contains(err.Error(), "hoh's relay") || !strings.Contains(err.Error(), "the CLI's own account")) {
			t.Errorf("%s: evidence %v", c.name, err)
		}
		if StopsConfig(err) != (c.cause == served.CauseNoRequest) {
			t.Errorf("%s: stops the configuration: %v", c.name, StopsConfig(err))
		}
		_, serr := os.Stat(runrecord.TrialLayout{Dir: dir}.Summary())
		if (serr == nil) != (c.cause == "") {
			t.Errorf("%s: summary written %v", c.name, serr == nil)
		}
	}
}

// failingProviderHarness ends with outcome after the relay logged lines
// (the fields of served.Line) for its attempt.
type failingProviderHarness struct {
	lines   []string
	outcome runrecord.Outcome
	log     string
}

func (h *failingProviderHarness) Name() string    { return "fake" }
func (h *failingProviderHarness) Version() string { return "0" }

func (h *failingProviderHarness) Run(ctx context.Context, inv harness.Invocation) (runrecord.Result, error) {
	f, _ := os.OpenFile(h.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	for _, l := range h.lines {
		fmt.Fprintf(f, `{"time":%q,"path":"/v1/responses",%s}`+"\n", time.Now().UTC().Format(time.RFC3339Nano), l)
	}
	f.Close()
	return runrecord.Result{Outcome: h.outcome, Evidence: "the CLI's own account", FinalMessage: "done"}, nil
}

// relayingHarness logs a served answer the way hoh's relay does.
type relayingHarness struct {
	*fakeHarness
	log string
}

func (h *relayingHarness) Run(ctx context.Context, inv harness.Invocation) (runrecord.Result, error) {
	res, err := h.fakeHarness.Run(ctx, inv)
	line := fmt.Sprintf(`{"time":%q,"path":"/v1/responses","status":200,"usage":{"input":1,"output":1,"total":2}}`+"\n", time.Now().UTC().Format(time.RFC3339Nano))
	f, _ := os.OpenFile(h.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	f.WriteString(line)
	f.Close()
	return res, err
}
