package harness

import (
	"encoding/json"
	"strings"

	"github.com/hoh-research/hoh/runrecord"
)

// shellToolNames are the tools whose plain-text input is the command itself
// (Codex reports command_execution items with the command as a string).
var shellToolNames = map[string]bool{"command_execution": true, "exec_command": true, "shell": true, "bash": true, "Bash": true}

// ExecutedCommands returns the shell commands an invocation ran, as its CLI's
// own event stream reported them (Result.Tools): Codex's command_execution
// items, and the command argument of the bash tool of Pi, OpenCode and Claude
// Code (JSON {"command": ...}; {"cmd": ...} or an argv array are read too).
// Tools that execute nothing (read, write, edit, search) are not commands.
func ExecutedCommands(tools []runrecord.ToolCall) []string {
	var out []string
	for _, t := range tools {
		if c, ok := ShellCommand(t); ok && strings.TrimSpace(c) != "" {
			out = append(out, c)
		}
	}
	return out
}

// ShellCommand is the shell command a tool call ran, if it is one (see
// ExecutedCommands).
func ShellCommand(t runrecord.ToolCall) (string, bool) {
	in := strings.TrimSpace(t.Input)
	if strings.HasPrefix(in, "{") {
		var args map[string]json.RawMessage
		if json.Unmarshal([]byte(in), &args) == nil {
			for _, key := range []string{"command", "cmd"} {
				raw, ok := args[key]
				if !ok {
					continue
				}
				var s string
				if json.Unmarshal(raw, &s) == nil {
					return s, true
				}
				var argv []string
				if json.Unmarshal(raw, &argv) == nil {
					return joinArgv(argv), true
				}
			}
			return "", false
		}
	}
	if shellToolNames[t.Name] {
		return t.Input, true
	}
	return "", false
}

// joinArgv writes an argv as one shell command line, quoting words that
// need it, so it reads like the string form other CLIs report.
func joinArgv(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`;&|<>()*?[]#~!{}") {
			words[i] = a
			continue
		}
		words[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(words, " ")
}
