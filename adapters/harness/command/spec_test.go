package command

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/runrecord"
)

func writeSpec(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cli.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadSpecRejectsBadInputNamingTheFile(t *testing.T) {
	base := "name: x\nbinary: /bin/true\nargs: [a]\noutput: {completed: {type: done}}\n"
	for _, c := range []struct{ body, want string }{
		{base + "prompt: carrier-pigeon\n", "prompt must be argv, stdin or file"},
		{base + "prompt: argv\nbogus: 1\n", "field bogus not found"},
		{"name: x\nbinary: /bin/true\nprompt: argv\nargs: [a]\n", "output.completed is required"},
		{base + "prompt: argv\nenv: {A: \"{{.Nope\"}\n", "env.A"},
		{base + "prompt: argv\nfiles: {../escape: x}\n", "inside the state dir"},
		{base + "prompt: argv\nfailure: [{path: x}]\n", "selects every event"},
	} {
		path := writeSpec(t, c.body)
		_, err := LoadSpec(path)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%q: error %v, want one naming %s and saying %q", c.body, err, path, c.want)
		}
	}
}

// A fake CLI: reads the prompt from the file named by its last argument,
// writes it into the work dir, and prints JSONL events with usage.
const fakeCLI = `#!/bin/sh
prompt_file="$3"
cp "$prompt_file" got-prompt.txt
echo "state=$FAKE_STATE key_set=${FAKE_KEY:+yes}" > env.txt
echo '{"type":"hello","sid":"s-42"}'
echo '{"type":"step","u":{"in":10,"cached":4,"out":3}}'
echo '{"type":"tool","name":"shell","args":{"cmd":"ls"}}'
echo '{"type":"step","u":{"in":20,"cached":6,"out":5}}'
echo 'not json'
echo '{"type":"msg","parts":[{"text":"all"},{"text":"done"}]}'
echo '{"type":"done"}'
`

func TestGenericHarnessPromptFileUsageSumAndFailureEvents(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "fakecli")
	if err := os.WriteFile(bin, []byte(fakeCLI), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := `name: fake
binary: ` + bin + `
prompt: file
args: [run, "{{if .Session}}--resume{{end}}", "{{.Model}}", "{{.PromptFile}}"]
state_env: [FAKE_STATE]
files: {conf/settings.json: '{"model": {{json .Model}}, "key_var": {{json .Provider.KeyEnv}}}'}
output:
  session: {type: hello, path: sid}
  final: {type: msg, path: "parts.*.text"}
  tools: {type: tool, path: name, args: args}
  completed: {type: done}
  usage: {type: step, mode: sum, input: [u.in], cached: [u.cached], output: [u.out]}
failure:
  - {type: error, path: message}
`
	s, err := LoadSpec(writeSpec(t, spec))
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(s, harness.Provider{KeyEnv: "FAKE_KEY", Model: "m-1"})
	if err != nil {
		t.Fatal(err)
	}
	inv := harness.Invocation{Access: harness.AccessWrite, Prompt: "Build it.\nWith 'quotes'.",
		WorkDir: t.TempDir(), StateDir: t.TempDir(), LogDir: t.TempDir(),
		WallTimeout: 10 * time.Second, IdleTimeout: 10 * time.Second,
		Env: []string{"FAKE_KEY=fake-secret-value"}, Exec: sandbox.Local{}}
	res, err := h.Run(context.Background(), inv)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != runrecord.OutcomeCompleted || res.SessionID != "s-42" || res.FinalMessage != "all\ndone" {
		t.Errorf("result %+v", res)
	}
	if want := (runrecord.Usage{Input: 30, CachedInput: 10, Output: 8, Total: 38}); res.Usage != want {
		t.Errorf("usage %+v, want %+v", res.Usage, want)
	}
	if len(res.Tools) != 1 || res.Tools[0].Name != "shell" || res.Tools[0].Input != `{"cmd":"ls"}` {
		t.Errorf("tools %+v", res.Tools)
	}
	if got, _ := os.ReadFile(filepath.Join(inv.WorkDir, "got-prompt.txt")); string(got) != inv.Prompt {
		t.Errorf("prompt file carried %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(inv.WorkDir, "env.txt")); string(got) != "state="+inv.StateDir+" key_set=yes\n" {
		t.Errorf("env %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(inv.StateDir, "conf", "settings.json")); string(got) != `{"model": "m-1", "key_var": "FAKE_KEY"}` {
		t.Errorf("templated file %q", got)
	}
	// The empty conditional argument is dropped.
	if len(res.Command) != 4 || res.Command[1] != "run" || res.Command[2] != "m-1" {
		t.Errorf("argv %q", res.Command)
	}

	// An error event with exit 0 is a failure, classified from its message.
	failing := strings.Replace(fakeCLI, `echo '{"type":"done"}'`, `echo '{"type":"error","message":"503 service unavailable"}'`, 1)
	os.WriteFile(bin, []byte(failing), 0o755)
	res, err = h.Run(context.Background(), inv)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != runrecord.OutcomeInfraFailure || !strings.Contains(res.Evidence, "503") {
		t.Errorf("outcome %s evidence %q", res.Outcome, res.Evidence)
	}
}

func TestLookupPaths(t *testing.T) {
	ev := map[string]any{"a": []any{map[string]any{"b": "x"}, map[string]any{"c": 1.0}, map[string]any{"b": "y"}}}
	if got := text(ev, "a.*.b"); got != "x\ny" {
		t.Errorf("a.*.b = %q", got)
	}
	if got := text(ev, "a.2.b"); got != "y" {
		t.Errorf("a.2.b = %q", got)
	}
	if got := sum(ev, []string{"a.*.c", "missing"}); got != 1 {
		t.Errorf("sum = %d", got)
	}
}
