package harnesstest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/scripted"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/runrecord"
)

// Target is one CLI adapter under the shared integration suite.
type Target struct {
	// New builds the adapter for provider p; it must t.Fatal (not skip) when
	// the CLI is missing.
	New func(t *testing.T, p harness.Provider) harness.Harness
	// APIs are the wire APIs the CLI supports ("chat", "responses", "anthropic").
	APIs []string
	// ReportsReasoning: the CLI reports reasoning tokens (else hoh records 0).
	// The Anthropic wire API carries no reasoning count, so no CLI reports
	// it there.
	ReportsReasoning bool
	// StateEnv names the variable whose value is the invocation's StateDir
	// (finds leftover processes after a kill).
	StateEnv string
	// StatusFaultWall bounds the runs against a failing provider; CLIs whose
	// own retries cannot be turned off need longer.
	StatusFaultWall time.Duration
	// SandboxedPlanner: the CLI's Planner keeps its shell tool under a
	// read-only sandbox (Codex) instead of losing it; the planner check
	// then allows a shell tool but still no write tool.
	SandboxedPlanner bool
	// Quick leaves out a stalled stream and a hanging CLI, which test hoh's
	// own timeouts rather than the CLI: for a second version of the same
	// CLI. The persistent 500 (the CLI's own retries) runs at every version.
	Quick bool
	// ServerErrorsRetriedWithoutEnd: this version retries a persistent 500
	// silently until hoh's wall timeout; the suite expects that timeout (the
	// trial turns it into infrastructure from the relay's log, see
	// experiments/trial TestProviderFailuresUntilTimeoutAreInfrastructure).
	ServerErrorsRetriedWithoutEnd bool
	// MoreInfraFaults are further faults (401, 429, garbage streams) that
	// must end as infrastructure failures within StatusFaultWall.
	MoreInfraFaults []scripted.Fault
}

// shellTools are the shell tools among writeTools.
var shellTools = []string{"bash", "Bash", "exec_command", "shell"}

// writeTools are tool names a read-only Planner must not be offered.
var writeTools = []string{"bash", "Bash", "write", "Write", "edit", "Edit", "MultiEdit", "exec_command", "shell", "apply_patch", "NotebookEdit"}

// Suite runs the Developer, Planner and continued-session turns on every API
// of tg, then the fault cases on its first API.
func Suite(t *testing.T, tg Target) {
	for _, api := range tg.APIs {
		t.Run(api+"/developer", func(t *testing.T) { developer(t, tg, api) })
		t.Run(api+"/planner", func(t *testing.T) { planner(t, tg, api) })
		t.Run(api+"/session", func(t *testing.T) { session(t, tg, api) })
	}
	Faults(t, tg, tg.APIs[0])
}

func reasoning(tg Target, api string) bool { return tg.ReportsReasoning && api != "anthropic" }

func developer(t *testing.T, tg Target, api string) {
	content := "scripted content\nsecond line with 'quotes' and $VARS\n"
	r := Start(t, scripted.Script{Entries: []scripted.Entry{{
		Name: "developer", Match: "Implement the greeting",
		Steps: []scripted.Step{
			{Shell: "echo shell-ran > marker.txt && echo done", Usage: &scripted.Usage{Input: 500, Cached: 100, Output: 40, Reasoning: 8}},
			{Write: &scripted.FileWrite{Path: "src/greeting.txt", Content: content}},
			{Say: "Implemented the greeting."},
		},
	}}})
	h := tg.New(t, r.Provider(api))
	inv := r.Inv(t, "dev", runrecord.RoleDeveloper, harness.AccessWrite, "Implement the greeting feature.")
	res := Run(t, h, inv)
	if res.Outcome != runrecord.OutcomeCompleted || res.ExitCode != 0 {
		t.Fatalf("outcome %s exit %d (%s)", res.Outcome, res.ExitCode, res.Evidence)
	}
	if got, err := os.ReadFile(filepath.Join(inv.WorkDir, "src", "greeting.txt")); err != nil || string(got) != content {
		t.Errorf("written file %q (%v), want %q", got, err, content)
	}
	if m, _ := os.ReadFile(filepath.Join(inv.WorkDir, "marker.txt")); string(m) != "shell-ran\n" {
		t.Errorf("shell step did not run in the work dir: %q", m)
	}
	if res.FinalMessage != "Implemented the greeting." {
		t.Errorf("final message %q", res.FinalMessage)
	}
	if len(res.Tools) != 2 || !strings.Contains(res.Tools[0].Input, "shell-ran") {
		out, _ := os.ReadFile(filepath.Join(inv.LogDir, "stdout.jsonl"))
		t.Errorf("tools %+v, want the shell call then the write; the CLI's events:\n%.6000s", res.Tools, out)
	}
	if res.SessionID == "" {
		t.Error("no session id")
	}
	if want := r.ServedSince(0, reasoning(tg, api)); res.Usage != want || want.Total == 0 {
		t.Errorf("usage %+v, provider served %+v", res.Usage, want)
	}
	for _, f := range []string{"stdout.jsonl", "stderr.log", "events.json", "command.json", "result.json"} {
		if _, err := os.Stat(filepath.Join(inv.LogDir, f)); err != nil {
			t.Errorf("log file: %v", err)
		}
	}
}

func planner(t *testing.T, tg Target, api string) {
	plan := "PLAN\n1. Add a greeting.\n2. Test it."
	r := Start(t, scripted.Script{Entries: []scripted.Entry{{
		Name: "planner", Match: "Write the development plan", Steps: []scripted.Step{{Say: plan}},
	}}})
	h := tg.New(t, r.Provider(api))
	inv := r.Inv(t, "plan", runrecord.RolePlanner, harness.AccessReadOnly, "Write the development plan for iteration 1.")
	res := Run(t, h, inv)
	if res.Outcome != runrecord.OutcomeCompleted || res.FinalMessage != plan {
		t.Fatalf("outcome %s (%s) final %q", res.Outcome, res.Evidence, res.FinalMessage)
	}
	if len(res.Tools) != 0 {
		t.Errorf("planner ran tools: %+v", res.Tools)
	}
	if entries, _ := os.ReadDir(inv.WorkDir); len(entries) != 0 {
		t.Errorf("planner left files in the work dir: %v", entries)
	}
	bodies := r.Bodies(t, "planner")
	if len(bodies) != 1 {
		t.Fatalf("planner made %d scripted model calls, want 1", len(bodies))
	}
	for _, name := range offeredTools(bodies[0]) {
		for _, w := range writeTools {
			if name == w && !(tg.SandboxedPlanner && slices.Contains(shellTools, name)) {
				t.Errorf("planner was offered write/shell tool %q", name)
			}
		}
	}
	if want := r.ServedSince(0, reasoning(tg, api)); res.Usage != want {
		t.Errorf("usage %+v, provider served %+v", res.Usage, want)
	}
}

// offeredTools lists the tool names in a request body of any wire API.
func offeredTools(body string) []string {
	var req struct {
		Tools []struct {
			Name     string `json:"name"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	_ = json.Unmarshal([]byte(body), &req)
	var names []string
	for _, tl := range req.Tools {
		if tl.Name != "" {
			names = append(names, tl.Name)
		} else {
			names = append(names, tl.Function.Name)
		}
	}
	return names
}

func session(t *testing.T, tg Target, api string) {
	r := Start(t, scripted.Script{Entries: []scripted.Entry{
		{Name: "first", Match: "First instruction", Steps: []scripted.Step{{Shell: "echo one"}, {Say: "first answer"}}},
		{Name: "second", Match: "Second instruction", Steps: []scripted.Step{{Say: "second answer"}}},
	}})
	h := tg.New(t, r.Provider(api))
	inv := r.Inv(t, "sess", runrecord.RoleDeveloper, harness.AccessWrite, "First instruction: echo one.")
	first := Run(t, h, inv)
	if first.Outcome != runrecord.OutcomeCompleted || first.SessionID == "" {
		t.Fatalf("first run %s %q session %q", first.Outcome, first.Evidence, first.SessionID)
	}
	before := len(r.Srv.Served())

	inv2 := inv
	inv2.Prompt = "Second instruction: continue."
	inv2.Session = first.SessionID
	inv2.LogDir = filepath.Join(r.Base, "sess", "log2")
	second := Run(t, h, inv2)
	if second.Outcome != runrecord.OutcomeCompleted || second.FinalMessage != "second answer" {
		t.Fatalf("resumed run %s %q final %q", second.Outcome, second.Evidence, second.FinalMessage)
	}
	if second.SessionID != first.SessionID {
		t.Errorf("session id changed: %s -> %s", first.SessionID, second.SessionID)
	}
	if want := r.ServedSince(before, reasoning(tg, api)); second.Usage != want || want.Total == 0 {
		t.Errorf("resumed usage %+v, provider served %+v in that run", second.Usage, want)
	}
	bodies := r.Bodies(t, "second")
	if len(bodies) == 0 {
		t.Fatal("no request of the resumed run reached the provider")
	}
	body := bodies[0]
	for _, want := range []string{"First instruction: echo one.", "first answer", "echo one", "Second instruction: continue."} {
		if !strings.Contains(body, want) {
			t.Errorf("resumed request lacks %q", want)
		}
	}
	if strings.Index(body, "First instruction") > strings.Index(body, "Second instruction") {
		t.Error("history is not before the new message")
	}
}

// Faults checks classification and clean termination against a failing
// provider on api.
func Faults(t *testing.T, tg Target, api string) {
	wall := tg.StatusFaultWall
	if wall == 0 {
		wall = 60 * time.Second
	}
	wall = testenv.Scaled(wall)
	rig := func(t *testing.T, f *scripted.Fault) (harness.Harness, harness.Invocation) {
		r := Start(t, scripted.Script{Entries: []scripted.Entry{{Name: "any", Match: ".", Repeat: true, Steps: []scripted.Step{{Say: "unreachable"}}}}})
		if err := r.Srv.SetFault(f); err != nil {
			t.Fatal(err)
		}
		inv := r.Inv(t, "fault", runrecord.RoleDeveloper, harness.AccessWrite, "Do the task.")
		inv.WallTimeout, inv.IdleTimeout = wall, wall
		return tg.New(t, r.Provider(api)), inv
	}
	assertGone := func(t *testing.T, inv harness.Invocation) {
		if left := Alive(tg.StateEnv + "=" + inv.StateDir); len(left) > 0 {
			t.Errorf("processes left after the run: %v", left)
		}
	}
	t.Run(api+"/http500", func(t *testing.T) {
		h, inv := rig(t, &scripted.Fault{Kind: scripted.FaultStatus, Status: 500})
		if tg.ServerErrorsRetriedWithoutEnd {
			inv.WallTimeout = 20 * time.Second
			res := Run(t, h, inv)
			if res.Outcome != runrecord.OutcomeTimeout || !strings.Contains(res.Evidence, "wall") || res.Usage.Total != 0 {
				t.Fatalf("outcome %s evidence %q usage %+v: the CLI no longer retries without end, drop ServerErrorsRetriedWithoutEnd", res.Outcome, res.Evidence, res.Usage)
			}
			assertGone(t, inv)
			return
		}
		res := Run(t, h, inv)
		if res.Outcome != runrecord.OutcomeInfraFailure {
			t.Fatalf("outcome %s evidence %q", res.Outcome, res.Evidence)
		}
		if res.Usage.Total != 0 {
			t.Errorf("usage from failed calls: %+v", res.Usage)
		}
		assertGone(t, inv)
	})
	t.Run(api+"/http400", func(t *testing.T) {
		h, inv := rig(t, &scripted.Fault{Kind: scripted.FaultStatus, Status: 400, Message: "context length exceeded"})
		res := Run(t, h, inv)
		if res.Outcome != runrecord.OutcomeAgentFailure || !strings.Contains(res.Evidence, "context length exceeded") {
			t.Fatalf("outcome %s evidence %q", res.Outcome, res.Evidence)
		}
		assertGone(t, inv)
	})
	for _, f := range tg.MoreInfraFaults {
		name := api + "/" + f.Kind
		if f.Status != 0 {
			name = fmt.Sprintf("%s/http%d", api, f.Status)
		}
		t.Run(name, func(t *testing.T) {
			h, inv := rig(t, &f)
			res := Run(t, h, inv)
			if res.Outcome != runrecord.OutcomeInfraFailure {
				t.Fatalf("outcome %s evidence %q", res.Outcome, res.Evidence)
			}
			assertGone(t, inv)
		})
	}
	if tg.Quick {
		return
	}
	faultTimeouts(t, api, rig, assertGone)
}

// faultRig starts a harness against a provider failing with f, with the
// invocation to run it.
type faultRig func(t *testing.T, f *scripted.Fault) (harness.Harness, harness.Invocation)

// faultTimeouts checks that a stalled stream ends at the idle timeout and a
// hung provider at the wall timeout, leaving no processes behind.
func faultTimeouts(t *testing.T, api string, rig faultRig, assertGone func(*testing.T, harness.Invocation)) {
	t.Run(api+"/stall", func(t *testing.T) {
		h, inv := rig(t, &scripted.Fault{Kind: scripted.FaultStall})
		inv.IdleTimeout, inv.WallTimeout = 5*time.Second, testenv.Scaled(60*time.Second)
		res := Run(t, h, inv)
		if res.Outcome != runrecord.OutcomeTimeout && res.Outcome != runrecord.OutcomeInfraFailure {
			t.Fatalf("outcome %s evidence %q", res.Outcome, res.Evidence)
		}
		if res.Outcome == runrecord.OutcomeTimeout && !strings.Contains(res.Evidence, "idle") {
			t.Errorf("evidence %q", res.Evidence)
		}
		if res.Duration > testenv.Scaled(30*time.Second) {
			t.Errorf("stalled stream ended only after %s", res.Duration)
		}
		assertGone(t, inv)
	})
	t.Run(api+"/hang", func(t *testing.T) {
		h, inv := rig(t, &scripted.Fault{Kind: scripted.FaultHang})
		inv.WallTimeout, inv.IdleTimeout = 6*time.Second, testenv.Scaled(60*time.Second)
		res := Run(t, h, inv)
		if res.Outcome != runrecord.OutcomeTimeout || !strings.Contains(res.Evidence, "wall") {
			t.Fatalf("outcome %s evidence %q", res.Outcome, res.Evidence)
		}
		if res.Duration > 6*time.Second+testenv.Scaled(14*time.Second) {
			t.Errorf("wall timeout took %s", res.Duration)
		}
		assertGone(t, inv)
	})
}

// Pins runs the suite at every version of pins: in full at the default
// (the first), without hoh's own timeout cases at the others (the paper's), so
// a change of the CLI between them shows up as a failing test. at builds
// the target for one version.
func Pins(t *testing.T, pins []string, at func(version string) Target) {
	for i, v := range pins {
		t.Run(v, func(t *testing.T) {
			tg := at(v)
			tg.Quick = i > 0
			Suite(t, tg)
		})
	}
}

// Effort runs a Planner turn with the provider's ReasoningEffort set and
// returns the body of the request the CLI sent, so a test can check the
// effort reached the wire.
func Effort(t *testing.T, tg Target, api, effort string) string {
	r := Start(t, scripted.Script{Entries: []scripted.Entry{{
		Name: "effort", Match: "Think hard", Steps: []scripted.Step{{Say: "thought"}},
	}}})
	p := r.Provider(api)
	p.ReasoningEffort = effort
	h := tg.New(t, p)
	res := Run(t, h, r.Inv(t, "effort", runrecord.RolePlanner, harness.AccessReadOnly, "Think hard about the plan."))
	if res.Outcome != runrecord.OutcomeCompleted {
		t.Fatalf("outcome %s (%s)", res.Outcome, res.Evidence)
	}
	bodies := r.Bodies(t, "effort")
	if len(bodies) == 0 {
		t.Fatal("no request reached the provider")
	}
	return bodies[0]
}
