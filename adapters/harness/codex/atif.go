package codex

import (
	"encoding/json"

	"github.com/hoh-research/hoh/adapters/harness/atif"
	"github.com/hoh-research/hoh/runrecord"
)

type codexItem struct {
	ID               string          `json:"id"`
	Type             string          `json:"type"`
	Text             string          `json:"text"`
	Msg              string          `json:"message"`
	Command          string          `json:"command"`
	AggregatedOutput string          `json:"aggregated_output"`
	ExitCode         *int            `json:"exit_code"`
	Status           string          `json:"status"`
	Server           string          `json:"server"`
	Tool             string          `json:"tool"`
	Arguments        json.RawMessage `json:"arguments"`
	Result           json.RawMessage `json:"result"`
	Query            string          `json:"query"`
	Changes          []struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
	} `json:"changes"`
}

// atifSteps is Steps for one invocation: a resumed thread's running total
// includes the earlier runs', so the ledger (what hoh counted for this run)
// says how much came before.
func atifSteps(raw []json.RawMessage, used runrecord.Usage) []atif.Step {
	all := ParseEvents(raw).Usage
	before := runrecord.Usage{Input: all.Input - used.Input, CachedInput: all.CachedInput - used.CachedInput,
		Output: all.Output - used.Output, Reasoning: all.Reasoning - used.Reasoning}
	if before.Input < 0 || before.Output < 0 || before.CachedInput < 0 || before.Reasoning < 0 {
		before = runrecord.Usage{}
	}
	return Steps(raw, before)
}

// Steps turns a `codex exec --json` stream into ATIF agent steps: each
// message, command, file change, MCP call and web search a step, the
// reasoning before it as its reasoning_content. Codex reports tokens per
// turn (running totals over a resumed thread), so each turn's tokens are
// the metrics of its last step; before is the thread's total before this
// run (what a resumed session had already used: zero for a new one).
func Steps(raw []json.RawMessage, before runrecord.Usage) []atif.Step {
	var b atif.Builder
	reasoning := ""
	counted := before // running total already attributed
	turnStart := 0
	add := func(s atif.Step) {
		s.ReasoningContent, reasoning = reasoning, ""
		b.Add(s)
	}
	for _, line := range raw {
		var e struct {
			Type  string     `json:"type"`
			Item  *codexItem `json:"item"`
			Usage *struct {
				InputTokens           int64 `json:"input_tokens"`
				CachedInputTokens     int64 `json:"cached_input_tokens"`
				OutputTokens          int64 `json:"output_tokens"`
				ReasoningOutputTokens int64 `json:"reasoning_output_tokens"`
			} `json:"usage"`
		}
		if json.Unmarshal(line, &e) != nil {
			continue
		}
		switch e.Type {
		case "turn.started":
			turnStart = len(b.Steps)
		case "turn.completed":
			if e.Usage == nil {
				continue
			}
			u := e.Usage
			total := runrecord.Usage{Input: u.InputTokens, CachedInput: u.CachedInputTokens,
				Output: u.OutputTokens, Reasoning: u.ReasoningOutputTokens, Total: u.InputTokens + u.OutputTokens}
			turn := runrecord.Usage{Input: total.Input - counted.Input, CachedInput: total.CachedInput - counted.CachedInput,
				Output: total.Output - counted.Output, Reasoning: total.Reasoning - counted.Reasoning}
			turn.Total = turn.Input + turn.Output
			counted = total
			if last := b.Last(); reasoning != "" || last == nil || last.StepID <= turnStart {
				add(atif.Step{Message: ""})
			}
			last := b.Last()
			last.Metrics = atif.UsageMetrics(turn)
			// Codex reports usage per turn, and a turn is a model call per
			// agent step (a message or a tool call) it produced: the
			// metrics merge that many calls (ATIF's llm_call_count).
			calls := 0
			for _, st := range b.Steps[turnStart:] {
				if st.Source == "agent" {
					calls++
				}
			}
			last.LLMCallCount = &calls
			last.Extra = merge(last.Extra, map[string]any{"metrics_scope": "turn", "llm_call_count_basis": "one call per agent step of the turn"})
		case "item.completed":
			it := e.Item
			if it == nil {
				continue
			}
			stepOfItem(&b, add, &reasoning, it)
		}
	}
	return b.Steps
}

// stepOfItem adds a completed item as a step (through add, which gives it
// the reasoning gathered so far), or gathers a reasoning item into
// *reasoning for the next step.
func stepOfItem(b *atif.Builder, add func(atif.Step), reasoning *string, it *codexItem) {
	switch it.Type {
	case "reasoning":
		if *reasoning != "" {
			*reasoning += "\n"
		}
		*reasoning += it.Text
	case "agent_message":
		add(atif.Step{Message: it.Text})
	case "command_execution":
		call(b, add, it.ID, "command_execution", map[string]any{"command": it.Command}, it.AggregatedOutput,
			map[string]any{"exit_code": it.ExitCode, "status": it.Status})
	case "file_change":
		var changes []any
		for _, c := range it.Changes {
			changes = append(changes, map[string]any{"path": c.Path, "kind": c.Kind})
		}
		call(b, add, it.ID, "file_change", map[string]any{"changes": changes}, it.Status, nil)
	case "mcp_tool_call":
		call(b, add, it.ID, "mcp:"+it.Server+"/"+it.Tool, atif.Arguments(it.Arguments), string(it.Result), nil)
	case "web_search":
		call(b, add, it.ID, "web_search", map[string]any{"query": it.Query}, "", nil)
	case "error":
		b.Add(atif.Step{Source: "system", Message: it.Msg})
	}
}

func call(b *atif.Builder, add func(atif.Step), id, name string, args map[string]any, output string, extra map[string]any) {
	if id == "" {
		id = "call-" + name
	}
	s := atif.Step{ToolCalls: []atif.ToolCall{{ToolCallID: id, FunctionName: name, Arguments: args}}}
	s.Observation = &atif.Observation{Results: []atif.ObservationResult{{SourceCallID: id, Content: atif.Text(output)}}}
	if extra != nil {
		s.Extra = map[string]any{"tool": extra}
	}
	add(s)
}

func merge(a, b map[string]any) map[string]any {
	if a == nil {
		a = map[string]any{}
	}
	for k, v := range b {
		a[k] = v
	}
	return a
}
