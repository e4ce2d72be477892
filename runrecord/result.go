package runrecord

import "time"

// ToolCall is one tool the agent used, as reported by the CLI's event stream.
type ToolCall struct {
	Name     string `json:"name"`
	Input    string `json:"input,omitempty"`
	ExitCode *int   `json:"exit_code,omitempty"`
	// Output is what the CLI recorded the tool printing (Codex's
	// aggregated_output, the tool result of Pi, OpenCode and Claude Code;
	// redacted like every log line, its last 64 KiB at most), nil when the
	// CLI recorded none. QA's observations are checked against it.
	Output *string `json:"output,omitempty"`
}

// Result is what hoh records about one invocation (result.json in its
// attempt's log directory).
type Result struct {
	Outcome      Outcome       `json:"outcome"`
	Evidence     string        `json:"evidence,omitempty"` // why it was classified so
	ExitCode     int           `json:"exit_code"`
	FinalMessage string        `json:"final_message"`
	Usage        Usage         `json:"usage"`
	SessionID    string        `json:"session_id,omitempty"`
	Tools        []ToolCall    `json:"tools,omitempty"`
	Command      []string      `json:"command"` // argv with secrets redacted
	Duration     time.Duration `json:"duration_ns"`
}
