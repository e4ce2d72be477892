package harness_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/harness/claude"
	"github.com/hoh-research/hoh/adapters/harness/cliproc"
	"github.com/hoh-research/hoh/adapters/harness/codex"
	"github.com/hoh-research/hoh/adapters/harness/opencode"
	"github.com/hoh-research/hoh/adapters/harness/pi"
)

// testdata/tool-output holds what each real CLI printed (scripted provider)
// for one shell call `echo Hi  Ada; echo second-line`: every parser must
// pair the call with the output the CLI recorded for it.
func TestEachCLIsShellToolOutputIsRecorded(t *testing.T) {
	for kind, parse := range map[string]func([]json.RawMessage) cliproc.Report{
		"codex": codex.ParseEvents, "pi": pi.ParseEvents, "opencode": opencode.ParseEvents, "claude": claude.ParseEvents,
	} {
		data, err := os.ReadFile(filepath.Join("testdata", "tool-output", kind+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		var raw []json.RawMessage
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			raw = append(raw, json.RawMessage(l))
		}
		tools := parse(raw).Tools
		if len(tools) != 1 || tools[0].Output == nil {
			t.Errorf("%s: tools %+v, want one call with its output", kind, tools)
			continue
		}
		if got := strings.TrimSpace(*tools[0].Output); got != "Hi Ada\nsecond-line" {
			t.Errorf("%s: output %q", kind, got)
		}
		if c, ok := harness.ShellCommand(tools[0]); !ok || !strings.Contains(c, "echo second-line") {
			t.Errorf("%s: command %q %v", kind, c, ok)
		}
	}
}

func TestToolOutputKeepsTheTail(t *testing.T) {
	long := strings.Repeat("x", harness.MaxToolOutput) + "END"
	if got := *harness.ToolOutput(long); len(got) != harness.MaxToolOutput || !strings.HasSuffix(got, "END") {
		t.Fatalf("len %d", len(got))
	}
}
