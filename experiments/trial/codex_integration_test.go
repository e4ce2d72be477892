package trial

// Integration tests: every condition through the REAL Codex CLI against the
// scripted provider (a test double for the model: its replies are a script,
// not a model's work). Each property of the conditions is proved from the run
// records on disk, as a reader of a real run would check it.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark/builtin"
	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/harness/codex"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/adapters/scripted"
	"github.com/hoh-research/hoh/experiments/history"
	"github.com/hoh-research/hoh/internal/testenv/clienv"
	"github.com/hoh-research/hoh/runrecord"
)

const (
	itKeyEnv = "HOH_TRIAL_TEST_KEY"
	itKey    = "sk-hoh-trial-secret-7373"
)

const planJSON = `{"objective":"greet by name","tasks":[{"id":"T1","description":"write greet.sh"}],"preserve":[],"acceptance":[{"id":"R1","requirement":"prints Hello, NAME!","observation":"run sh greet.sh Ada"}]}`
const devJSON = `{"summary":"wrote greet.sh","self_tests":[{"command":"sh greet.sh Ada","outcome":"Hello, Ada!"}]}`
const qaJSON = `{"iteration":1,"qa_status":"partial","verified_records":[{"claim_id":"c1","claim":"greets Ada","status":"verified","execution_records":[{"type":"command","command":"sh greet.sh Ada","observation":"Hello, Ada!"}]}],"gap_records":[{"claim_id":"c2","claim":"no usage text","status":"gap","recommended_update":"QA-EVIDENCE-MARKER add a usage line"}]}`

func script(planner scripted.Entry, qaShell string) scripted.Script {
	write := &scripted.FileWrite{Path: "greet.sh", Content: greet}
	return scripted.Script{Entries: []scripted.Entry{
		planner,
		{Name: "developer", Match: `Role: Developer`, Repeat: true, Steps: []scripted.Step{
			{Write: write}, {Shell: "sh greet.sh Ada"}, {Say: devJSON}}},
		{Name: "qa", Match: `Role: QA Tester`, Repeat: true, Steps: []scripted.Step{
			{Shell: qaShell}, {Say: qaJSON}}},
		// Vanilla's prompt is the task specification alone; it replies in prose.
		{Name: "vanilla", Match: `(?s)shell script .greet\.sh. in the project root`, Repeat: true, Steps: []scripted.Step{{Write: write}, {Say: vanillaProse}}},
		{Name: "continuation", Match: `(?m)^Continue developing`, Repeat: true, Steps: []scripted.Step{{Shell: "ls"}, {Say: "Reviewed it again; nothing left to fix."}}},
	}}
}

const vanillaProse = "I wrote greet.sh; it prints Hello, NAME! and Hello, World! without an argument."

var goodPlanner = scripted.Entry{Name: "planner", Match: `Role: Project Planner`, Repeat: true,
	Steps: []scripted.Step{{Say: planJSON}}}

type codexRun struct {
	dir string
	srv *scripted.Server
	s   *runrecord.Summary
}

// scriptedCodex starts the scripted provider with sc and the real Codex CLI
// talking to it (its own sandbox bypassed when bypass is set).
func scriptedCodex(t *testing.T, sc scripted.Script, bypass bool) (*scripted.Server, harness.Harness) {
	t.Helper()
	bin := clienv.CLI(t, "codex")
	srv, err := scripted.Start(sc, scripted.Options{LogPath: filepath.Join(t.TempDir(), "provider.jsonl")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	h, err := codex.New(codex.Config{Binary: bin, BypassSandbox: bypass, Provider: harness.Provider{
		Name: "scripted", API: "responses", BaseURL: srv.URL() + "/v1", KeyEnv: itKeyEnv, Model: "scripted-model"}})
	if err != nil {
		t.Fatal(err)
	}
	return srv, h
}

func runCodexTrial(t *testing.T, arm string, sc scripted.Script, bypass bool) codexRun {
	t.Helper()
	srv, h := scriptedCodex(t, sc, bypass)
	b := builtin.Benchmark{}
	ts, _ := b.Tasks(context.Background())
	dir := t.TempDir()
	spec := runrecord.TrialSpec{Key: "builtin/greet/" + arm, Benchmark: "builtin", Task: "greet", Config: "codex-scripted", Rep: 1}
	if err := spec.Arm.UnmarshalText([]byte(arm)); err != nil {
		t.Fatal(err)
	}
	s, err := Run(context.Background(), dir, spec, NewEnv(
		Policy{Timeouts: Timeouts{Planner: 2 * time.Minute, Developer: 2 * time.Minute, QA: 2 * time.Minute, Idle: time.Minute}},
		Place{Bench: b, Task: ts[0], Exec: sandbox.Local{KillGrace: 500 * time.Millisecond}},
		Route{Env: []string{itKeyEnv + "=" + itKey}, Secrets: []string{itKey}},
		h,
		Mode{},
	))
	if err != nil {
		t.Fatalf("%s: %v", arm, err)
	}
	return codexRun{dir, srv, s}
}

func stages(t *testing.T, dir string) []runrecord.StageRecord {
	st, err := loadState(runrecord.TrialLayout{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return st.stages
}

// prompts returns the prompt.md files of a role, in attempt order per iteration.
func prompts(t *testing.T, dir, role string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "iter-*", role, "attempt-*", "prompt.md"))
	var out []string
	for _, f := range files {
		b, _ := os.ReadFile(f)
		out = append(out, string(b))
	}
	return out
}

func checkCommon(t *testing.T, r codexRun) {
	t.Helper()
	// Token sums in the records equal what the provider served.
	served := r.srv.TotalUsage()
	if r.s.Usage.Input != served.Input || r.s.Usage.Output != served.Output {
		t.Errorf("ledger usage %+v, provider served %+v", r.s.Usage, served)
	}
	var ledger int64
	for _, st := range stages(t, r.dir) {
		for _, inv := range st.Invocations {
			ledger += inv.Usage.Input + inv.Usage.Output
		}
	}
	if cps := r.s.Checkpoints; len(cps) > 0 && cps[len(cps)-1].Tokens != ledger {
		t.Errorf("final checkpoint tokens %d, ledger %d", cps[len(cps)-1].Tokens, ledger)
	}
	// No secret, no hidden expected output, no evaluator output anywhere an
	// agent could read or in any prompt; the key in no record at all.
	hidden := []string{"Hello, Grace Hopper!", "failed_cases"}
	filepath.Walk(r.dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || strings.Contains(p, "history.git") {
			return nil
		}
		b, _ := os.ReadFile(p)
		if bytes.Contains(b, []byte(itKey)) {
			t.Errorf("API key in %s", p)
		}
		if strings.Contains(p, string(filepath.Separator)+"evaluation"+string(filepath.Separator)) || strings.HasSuffix(p, "summary.json") {
			return nil // evaluator records, written after the loop
		}
		for _, h := range hidden {
			if bytes.Contains(b, []byte(h)) {
				t.Errorf("evaluator-only text %q in %s", h, p)
			}
		}
		return nil
	})
	for _, s := range r.srv.Served() {
		_ = s // requests are checked through the provider log below
	}
}

func TestCodexHoHAndAblationChannels(t *testing.T) {
	t.Run("hoh@2", func(t *testing.T) {
		r := runCodexTrial(t, "hoh@2", script(goodPlanner, "sh greet.sh Ada"), false)
		if r.s.Status != runrecord.StatusCompleted || len(r.s.Checkpoints) != 2 || r.s.Checkpoints[1].Metrics["pass_rate"] != 100 {
			t.Fatalf("summary %+v", r.s)
		}
		if p := prompts(t, r.dir, "planner"); len(p) != 2 || !strings.Contains(p[1], "evidence-1.json") {
			t.Fatalf("planner 2 must be given E_1 (%d planner prompts)", len(p))
		}
		checkCommon(t, r)
	})
	t.Run("wo-plan-update@2", func(t *testing.T) {
		r := runCodexTrial(t, "wo-plan-update@2", script(goodPlanner, "sh greet.sh Ada"), false)
		if n := len(prompts(t, r.dir, "planner")); n != 1 {
			t.Fatalf("want one planner invocation, got %d", n)
		}
		d1, _ := os.ReadFile(filepath.Join(runrecord.TrialLayout{Dir: r.dir}.Stage(1, "planner"), "plan.json"))
		d2, err := os.ReadFile(filepath.Join(runrecord.TrialLayout{Dir: r.dir}.Stage(2, "planner"), "plan.json"))
		if err != nil || !bytes.Equal(d1, d2) {
			t.Fatal("D_2 must equal D_1 byte for byte")
		}
		checkCommon(t, r)
	})
	t.Run("wo-evidence-feedback@2", func(t *testing.T) {
		r := runCodexTrial(t, "wo-evidence-feedback@2", script(goodPlanner, "sh greet.sh Ada"), false)
		ps := prompts(t, r.dir, "planner")
		if len(ps) != 2 || len(prompts(t, r.dir, "qa")) != 2 {
			t.Fatalf("planner %d, qa %d", len(ps), len(prompts(t, r.dir, "qa")))
		}
		for _, p := range ps {
			if strings.Contains(p, "QA-EVIDENCE-MARKER") || strings.Contains(p, "evidence-1.json") || strings.Contains(p, "Evidence from") {
				t.Errorf("evidence reached a planner prompt:\n%s", p)
			}
		}
		// Nor did it reach the model in any planner request.
		assertProviderLog(t, r, "planner", "QA-EVIDENCE-MARKER")
		checkCommon(t, r)
	})
	t.Run("wo-warm-start@2", func(t *testing.T) {
		r := runCodexTrial(t, "wo-warm-start@2", script(goodPlanner, "sh greet.sh Ada"), false)
		b := builtin.Benchmark{}
		ts, _ := b.Tasks(context.Background())
		a0 := t.TempDir()
		b.InitialWorkspace(context.Background(), ts[0], a0)
		want, _ := history.Digest(a0)
		n := 0
		for _, st := range stages(t, r.dir) {
			if st.Role == "developer" {
				n++
				if st.StartDigest != want {
					t.Errorf("developer %d started at %s, want A_0 %s", st.Iteration, st.StartDigest, want)
				}
			}
		}
		if n != 2 {
			t.Fatalf("%d developer stages", n)
		}
		checkCommon(t, r)
	})
}

// assertProviderLog checks that no request of the given scripted entry
// carried text.
func assertProviderLog(t *testing.T, r codexRun, entry, text string) {
	t.Helper()
	for _, s := range r.srv.Served() {
		if s.Entry == entry {
			raw, _ := json.Marshal(s)
			if bytes.Contains(raw, []byte(text)) {
				t.Errorf("%q reached the model in a %s request", text, entry)
			}
		}
	}
}

func TestCodexVanillaContinuationResumesTheSameSession(t *testing.T) {
	r := runCodexTrial(t, "vanilla-continuation@3", script(goodPlanner, "true"), false)
	var sessions []string
	for _, st := range stages(t, r.dir) {
		sessions = append(sessions, st.Session)
	}
	if len(sessions) != 3 || sessions[0] == "" || sessions[1] != sessions[0] || sessions[2] != sessions[0] {
		t.Fatalf("sessions %q: every pass must continue the first pass's Codex session", sessions)
	}
	cmds, _ := filepath.Glob(filepath.Join(r.dir, "iter-02", "developer", "attempt-1", "logs", "*"))
	found := false
	for _, c := range cmds {
		b, _ := os.ReadFile(c)
		if bytes.Contains(b, []byte(`"resume"`)) || bytes.Contains(b, []byte("exec resume")) {
			found = true
		}
	}
	if !found {
		t.Errorf("pass 2 was not run as `codex exec resume` (logs: %v)", cmds)
	}
	if len(r.s.Checkpoints) != 3 {
		t.Fatalf("checkpoints %d", len(r.s.Checkpoints))
	}
	checkCommon(t, r)
}

func TestCodexPlannerFailingAtT2StillYieldsEveryCheckpoint(t *testing.T) {
	// The planner of iteration 2 (and each of its contract retries, which
	// continue its session) answers in prose; iterations 1 and 3 plan.
	bad := scripted.Entry{Name: "planner-bad", Match: `Role: Project Planner \(HoH iteration 2\)|did not satisfy the output contract`, Repeat: true,
		Steps: []scripted.Step{{Say: "I would rather not produce JSON today."}}}
	sc := script(goodPlanner, "true")
	sc.Entries = append([]scripted.Entry{bad}, sc.Entries...)
	r := runCodexTrial(t, "hoh@3", sc, false)
	if r.s.Status != runrecord.StatusCompleted || len(r.s.RoleFailures) != 1 || !strings.Contains(r.s.RoleFailures[0], "no JSON object") {
		t.Fatalf("status %s, role failures %q", r.s.Status, r.s.RoleFailures)
	}
	if len(r.s.Checkpoints) != 3 {
		t.Fatalf("checkpoints %+v", r.s.Checkpoints)
	}
	for _, cp := range r.s.Checkpoints {
		if cp.Metrics["pass_rate"] != 100 || cp.EvalError != "" {
			t.Errorf("checkpoint %d not evaluated: %+v", cp.Step, cp)
		}
	}
	got := map[int]int{}
	for _, st := range stages(t, r.dir) {
		switch {
		case st.Role == "planner" && st.Iteration == 2:
			if len(st.Invocations) != 3 || st.RoleFailure == "" {
				t.Errorf("planner 2: %d invocations (want 1 + 2 retries), failure %q", len(st.Invocations), st.RoleFailure)
			}
		case st.Role == "developer":
			got[st.Iteration] = st.PlanFrom
		}
	}
	if got[1] != 1 || got[2] != 1 || got[3] != 3 {
		t.Fatalf("developers got D_%d, D_%d, D_%d; want D_1, D_1 (the last valid), D_3", got[1], got[2], got[3])
	}
	if _, err := os.Stat(filepath.Join(runrecord.TrialLayout{Dir: r.dir}.Stage(2, "planner"), "plan.json")); !os.IsNotExist(err) {
		t.Fatal("a failed planner must leave no plan (never a template)")
	}
	checkCommon(t, r)
}

func TestCodexVanillaWithProseIsOnePassAndContinuationResumesIt(t *testing.T) {
	sc := script(goodPlanner, "true")
	r := runCodexTrial(t, "vanilla", sc, false)
	served := func(entry string) int {
		n := 0
		for _, s := range r.srv.Served() {
			if s.Entry == entry {
				n++
			}
		}
		return n
	}
	st := stages(t, r.dir)
	if r.s.Status != runrecord.StatusCompleted || len(st) != 1 || len(st[0].Invocations) != 1 || len(r.s.RoleFailures) != 0 {
		t.Fatalf("Vanilla must be one invocation evaluated normally: %+v, stages %+v", r.s, st)
	}
	if r.s.Checkpoints[0].Metrics["pass_rate"] != 100 {
		t.Fatalf("A_1 is the workspace after the invocation: %+v", r.s.Checkpoints)
	}
	msg, err := os.ReadFile(filepath.Join(runrecord.TrialLayout{Dir: r.dir}.Stage(1, "developer"), "final-message.md"))
	if err != nil || !strings.Contains(string(msg), vanillaProse) {
		t.Fatalf("final message kept as text: %q %v", msg, err)
	}
	prompt := prompts(t, r.dir, "developer")[0]
	if strings.Contains(prompt, "JSON") || strings.Contains(prompt, "Boundaries") {
		t.Fatalf("no hoh contract in the Vanilla prompt:\n%s", prompt)
	}
	vanillaTurns := served("vanilla")

	// VC@2 continues this very trial: one more invocation, resuming the session.
	h, err := codex.New(codex.Config{Binary: clienv.CLI(t, "codex"), Provider: harness.Provider{
		Name: "scripted", API: "responses", BaseURL: r.srv.URL() + "/v1", KeyEnv: itKeyEnv, Model: "scripted-model"}})
	if err != nil {
		t.Fatal(err)
	}
	b := builtin.Benchmark{}
	ts, _ := b.Tasks(context.Background())
	spec := runrecord.TrialSpec{Key: "builtin/greet/vanilla", Benchmark: "builtin", Task: "greet", Config: "codex-scripted", Arm: runrecord.Arm{Condition: "vanilla-continuation", Checkpoint: 2}, Rep: 1}
	s, err := Run(context.Background(), r.dir, spec, NewEnv(
		Policy{Timeouts: Timeouts{Developer: 2 * time.Minute, Idle: time.Minute}},
		Place{Bench: b, Task: ts[0], Exec: sandbox.Local{KillGrace: 500 * time.Millisecond}},
		Route{Env: []string{itKeyEnv + "=" + itKey}, Secrets: []string{itKey}},
		h,
		Mode{},
	))
	if err != nil {
		t.Fatal(err)
	}
	st = stages(t, r.dir)
	if len(st) != 2 || st[1].Session == "" || st[1].Session != st[0].Session || st[1].SessionNote != "" {
		t.Fatalf("pass 2 must resume the Vanilla pass's session: %+v", st)
	}
	if served("vanilla") != vanillaTurns || served("continuation") == 0 {
		t.Fatalf("no second Vanilla pass: vanilla turns %d -> %d, continuation %d", vanillaTurns, served("vanilla"), served("continuation"))
	}
	if len(s.Checkpoints) != 2 || s.Checkpoints[1].Tokens <= s.Checkpoints[0].Tokens {
		t.Fatalf("checkpoints %+v", s.Checkpoints)
	}
	r.s = s
	checkCommon(t, r)
}

func TestCodexQAWritingIntoTheWorkspaceIsRefused(t *testing.T) {
	// The QA Tester's working directory is <trial>/iter-01/qa/candidate; the
	// authoritative workspace is <trial>/workspace. Codex's own sandbox is
	// bypassed here; hoh's view of the QA invocation does not contain the
	// workspace at all, so the write fails and nothing needs undoing.
	r := runCodexTrial(t, "hoh@1", script(goodPlanner, "echo tampered > ../../../workspace/greet.sh"), true)
	if len(r.s.Violations) != 0 {
		t.Fatalf("violations %v", r.s.Violations)
	}
	var res runrecord.Result
	if err := runrecord.ReadJSON(filepath.Join(runrecord.TrialLayout{Dir: r.dir}.Stage(1, "qa"), "attempt-1", "result.json"), &res); err != nil {
		t.Fatal(err)
	}
	refused := false
	for _, tc := range res.Tools {
		if strings.Contains(tc.Input, "tampered") && tc.ExitCode != nil && *tc.ExitCode != 0 {
			refused = true
		}
	}
	if !refused {
		t.Fatalf("the QA's write into the workspace was not refused: tools %+v", res.Tools)
	}
	got, _ := os.ReadFile(filepath.Join(runrecord.TrialLayout{Dir: r.dir}.Workspace(), "greet.sh"))
	if string(got) != greet {
		t.Fatalf("candidate not restored: %q", got)
	}
	if r.s.Checkpoints[0].Metrics["pass_rate"] != 100 {
		t.Fatal(fmt.Sprintf("A_1 must be the Developer's artifact, scored %v", r.s.Checkpoints[0].Metrics))
	}
	checkCommon(t, r)
}
