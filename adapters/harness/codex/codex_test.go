package codex

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/harness/cliproc"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/runrecord"
)

func testHarness(t *testing.T, bypass bool) *Harness {
	t.Helper()
	h, err := New(Config{Binary: fakeBinary(t), BypassSandbox: bypass, Overrides: []string{"foo=1"},
		Provider: harness.Provider{Name: "p", API: "responses", BaseURL: "http://127.0.0.1:1/v1", KeyEnv: "K", Model: "m", ReasoningEffort: "high"}})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// fakeBinary is an executable standing in for codex where only argv matters
// (New refuses a binary that does not exist).
func fakeBinary(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "codex")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestArgvPerRoleAndResume(t *testing.T) {
	h := testHarness(t, false)
	inv := harness.Invocation{Access: harness.AccessReadOnly, WorkDir: "/w", Prompt: "plan it"}
	args, stdin := h.argv(inv)
	want := []string{h.cfg.Binary, "exec", "--json", "--skip-git-repo-check", "-m", "m", "-C", "/w", "-s", "read-only",
		"-c", `model_reasoning_effort="high"`, "-c", "foo=1", "plan it"}
	if !slices.Equal(args, want) || stdin != "" {
		t.Errorf("planner argv %q", args)
	}
	inv.Access, inv.Session = harness.AccessWrite, "abc-123"
	args, _ = h.argv(inv)
	if args[2] != "resume" || slices.Contains(args, "-C") || slices.Contains(args, "-s") ||
		!slices.Contains(args, `sandbox_mode="workspace-write"`) || args[len(args)-2] != "abc-123" {
		t.Errorf("resume argv %q", args)
	}
	for _, a := range []harness.Access{harness.AccessExec, harness.AccessReadOnly} {
		// In a container bwrap cannot run: even the Planner's commands
		// would all fail under Codex's read-only sandbox.
		args, _ = testHarness(t, true).argv(harness.Invocation{Access: a, WorkDir: "/w", Prompt: "qa"})
		if !slices.Contains(args, "--dangerously-bypass-approvals-and-sandbox") || slices.Contains(args, "-s") {
			t.Errorf("bypass argv for %s %q", a, args)
		}
	}
	// QA under hoh's read-only view: Codex's own bwrap cannot run there.
	args, _ = h.argv(harness.Invocation{Access: harness.AccessExec, WorkDir: "/w", Prompt: "qa",
		Exec: sandbox.ReadOnlyView{Inner: sandbox.Local{}, Paths: []string{"/w"}}})
	if !slices.Contains(args, "--dangerously-bypass-approvals-and-sandbox") {
		t.Errorf("QA in hoh's view argv %q", args)
	}
	if args, _ = h.argv(harness.Invocation{Access: harness.AccessExec, WorkDir: "/w", Prompt: "qa"}); !slices.Contains(args, "workspace-write") {
		t.Errorf("QA without hoh's view argv %q", args)
	}
	long := strings.Repeat("x", argvPromptLimit+1)
	args, stdin = h.argv(harness.Invocation{Access: harness.AccessWrite, WorkDir: "/w", Prompt: long})
	if args[len(args)-1] != "-" || stdin != long {
		t.Errorf("long prompt not sent through stdin")
	}
}

func TestNewRejectsNonResponsesProvider(t *testing.T) {
	_, err := New(Config{Binary: "/x", Provider: harness.Provider{Name: "p", API: "chat", BaseURL: "u", KeyEnv: "K", Model: "m"}})
	if err == nil || !strings.Contains(err.Error(), "Responses") {
		t.Errorf("chat provider accepted: %v", err)
	}
	if _, err := New(Config{Binary: "/x", Provider: harness.Provider{Name: "p"}}); err == nil {
		t.Error("incomplete provider accepted")
	}
}

func TestConfigTOMLNamesKeyVariableOnly(t *testing.T) {
	dir := t.TempDir()
	if err := testHarness(t, false).writeConfig(dir, runrecord.RoleDeveloper); err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		ModelProvider  string `toml:"model_provider"`
		CheckUpdate    bool   `toml:"check_for_update_on_startup"`
		ModelProviders map[string]struct {
			BaseURL        string `toml:"base_url"`
			EnvKey         string `toml:"env_key"`
			WireAPI        string `toml:"wire_api"`
			RequestRetries *int   `toml:"request_max_retries"`
			StreamRetries  *int   `toml:"stream_max_retries"`
		} `toml:"model_providers"`
		Analytics struct{ Enabled bool }
		Features  struct{ Plugins, Apps bool }
	}
	if _, err := toml.DecodeFile(filepath.Join(dir, "config.toml"), &cfg); err != nil {
		t.Fatal(err)
	}
	p := cfg.ModelProviders["hoh-p"]
	if cfg.ModelProvider != "hoh-p" || p.EnvKey != "K" || p.WireAPI != "responses" || p.BaseURL != "http://127.0.0.1:1/v1" ||
		p.RequestRetries == nil || *p.RequestRetries != 0 || p.StreamRetries == nil || *p.StreamRetries != 0 ||
		cfg.CheckUpdate || cfg.Analytics.Enabled || cfg.Features.Plugins || cfg.Features.Apps {
		t.Errorf("config %+v", cfg)
	}
}

func lines(s ...string) []json.RawMessage { return cliproc.JSONLines(s) }

func classify(exit sandbox.Exit, rep cliproc.Report, stderr string) (runrecord.Outcome, string) {
	return cliproc.Outcome(cliproc.Process{Exit: exit, StderrTail: stderr}, rep)
}

func TestParseEventsAndClassify(t *testing.T) {
	ok := ParseEvents(lines(
		`{"type":"thread.started","thread_id":"T1"}`,
		`{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `+"`m`"+` not found. Defaulting"}}`,
		`not json`,
		`{"type":"item.completed","item":{"type":"command_execution","command":"ls","exit_code":2,"status":"failed"}}`,
		`{"type":"item.completed","item":{"type":"agent_message","text":"first"}}`,
		`{"type":"error","message":"Reconnecting... 1/5 (stream disconnected before completion)"}`,
		`{"type":"item.completed","item":{"type":"file_change","changes":[{"path":"a.go","kind":"add"}]}}`,
		`{"type":"item.completed","item":{"type":"agent_message","text":"last"}}`,
		`{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":10,"output_tokens":20,"reasoning_output_tokens":5}}`,
	))
	if ok.SessionID != "T1" || ok.FinalMessage != "last" || len(ok.Tools) != 2 || *ok.Tools[0].ExitCode != 2 || ok.Tools[1].Input != "add a.go" {
		t.Errorf("parsed %+v", ok)
	}
	if ok.Usage != (runrecord.Usage{Input: 100, CachedInput: 10, Output: 20, Reasoning: 5, Total: 120}) {
		t.Errorf("usage %+v", ok.Usage)
	}
	// Codex 0.142 may finish the turn without completing a command it
	// started: the command is still a tool call, its exit code unknown.
	open := ParseEvents(lines(
		`{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"echo a","exit_code":null,"status":"in_progress"}}`,
		`{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"echo a","exit_code":0,"status":"completed"}}`,
		`{"type":"item.started","item":{"id":"item_2","type":"command_execution","command":"cat > f","exit_code":null,"status":"in_progress"}}`,
		`{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"done"}}`,
		`{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}`,
	))
	if len(open.Tools) != 2 || open.Tools[0].ExitCode == nil || *open.Tools[0].ExitCode != 0 || open.Tools[1].Input != "cat > f" || open.Tools[1].ExitCode != nil {
		t.Errorf("started commands: %+v", open.Tools)
	}
	// Warnings and a retried stream before the finished turn do not fail it.
	if o, _ := classify(sandbox.Exit{Code: 0}, ok, ""); o != runrecord.OutcomeCompleted {
		t.Errorf("completed run classified %s", o)
	}

	failed := func(msg string) cliproc.Report {
		return ParseEvents(lines(`{"type":"error","message":"`+msg+`"}`, `{"type":"turn.failed","error":{"message":"`+msg+`"}}`))
	}
	cases := []struct {
		exit     sandbox.Exit
		ev       cliproc.Report
		stderr   string
		want     runrecord.Outcome
		evidence string
	}{
		{sandbox.Exit{Code: 1}, failed("We’re currently experiencing high demand, which may cause temporary errors."), "", runrecord.OutcomeInfraFailure, "high demand"},
		{sandbox.Exit{Code: 1}, failed("unexpected status 401 Unauthorized: bad key"), "", runrecord.OutcomeInfraFailure, "401"},
		{sandbox.Exit{Code: 1}, failed("unexpected status 429 Too Many Requests"), "", runrecord.OutcomeInfraFailure, "429"},
		{sandbox.Exit{Code: 1}, failed("stream disconnected before completion: error decoding"), "", runrecord.OutcomeInfraFailure, "stream disconnected"},
		{sandbox.Exit{Code: 1}, failed(`{\"error\":{\"message\":\"max 512 tokens\",\"type\":\"invalid_request_error\"}}`), "", runrecord.OutcomeAgentFailure, "HTTP 400"},
		{sandbox.Exit{Code: 1}, failed("the agent gave up"), "", runrecord.OutcomeAgentFailure, "gave up"},
		{sandbox.Exit{Code: -1, Idle: true, Detail: "killed after 4s without output"}, failed("x"), "", runrecord.OutcomeTimeout, "without output"},
		{sandbox.Exit{Code: -1, TimedOut: true, Detail: "killed after wall timeout 5s"}, cliproc.Report{}, "", runrecord.OutcomeTimeout, "wall"},
		{sandbox.Exit{Code: 2}, cliproc.Report{}, "error: unknown config key\nusage: codex", runrecord.OutcomeAgentFailure, "exit code 2"},
		{sandbox.Exit{Code: 1}, cliproc.Report{}, "Error: connection refused", runrecord.OutcomeInfraFailure, "connection refused"},
		{sandbox.Exit{Code: 0}, cliproc.Report{}, "", runrecord.OutcomeAgentFailure, "without a finished turn"},
		// Exit 0 without a finished turn: stderr decides, as for every CLI.
		{sandbox.Exit{Code: 0}, cliproc.Report{}, "Error: socket hang up", runrecord.OutcomeInfraFailure, "socket hang up"},
	}
	for i, c := range cases {
		o, ev := classify(c.exit, c.ev, c.stderr)
		if o != c.want || !strings.Contains(ev, c.evidence) {
			t.Errorf("case %d: %s %q, want %s containing %q", i, o, ev, c.want, c.evidence)
		}
	}
}

// Codex waits for an unreachable provider without end; hoh stops it after
// networkWaits such events in a row, and any other event resets the count.
func TestStopWhenUnreachable(t *testing.T) {
	wait := `{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}`
	stop := StopWhenUnreachable()
	for i, line := range []string{wait, `{"type":"turn.started"}`, wait, wait} {
		if why := stop(line); why != "" {
			t.Fatalf("line %d stopped the run: %s", i, why)
		}
	}
	why := stop(wait)
	if !strings.Contains(why, "provider unreachable") {
		t.Fatalf("third wait in a row: %q", why)
	}
	o, evidence := cliproc.Outcome(cliproc.Process{Exit: sandbox.Exit{Code: -1, Detail: "cancelled: context canceled"}, Stopped: why},
		ParseEvents(lines(wait, wait, wait)))
	if o != runrecord.OutcomeInfraFailure || !strings.Contains(evidence, "waiting for the network") {
		t.Errorf("stopped run: %s %q", o, evidence)
	}
}
