package harness

import (
	"slices"
	"testing"

	"github.com/hoh-research/hoh/runrecord"
)

// Each CLI's form of a shell tool call yields its command; tools that run
// nothing yield none.
func TestExecutedCommandsReadsEachCLIsShellTool(t *testing.T) {
	tools := []runrecord.ToolCall{
		{Name: "command_execution", Input: "/bin/bash -lc 'sh greet.sh Ada'"},         // Codex
		{Name: "bash", Input: `{"command":"sh greet.sh Bo"}`},                         // Pi
		{Name: "bash", Input: `{"command":"ls","description":"Run a shell command"}`}, // OpenCode
		{Name: "Bash", Input: `{"command":"cat x"}`},                                  // Claude Code
		{Name: "exec_command", Input: `{"cmd":["bash","-lc","echo it's"]}`},
		{Name: "read", Input: `{"path":"greet.sh"}`},
		{Name: "Write", Input: `{"file_path":"a","content":"b"}`},
		{Name: "file_change", Input: "add greet.sh"},
		{Name: "bash", Input: `{"command":""}`},
	}
	want := []string{"/bin/bash -lc 'sh greet.sh Ada'", "sh greet.sh Bo", "ls", "cat x", `bash -lc 'echo it'\''s'`}
	if got := ExecutedCommands(tools); !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}
