package scripted

import (
	"strings"
	"testing"
)

// A tool step calls an MCP tool as each CLI advertises it: inside a
// Responses namespace (Codex: the call carries the namespace), as
// mcp__SERVER__NAME (Claude Code, Pi) or SERVER_NAME (OpenCode); a name no
// advertised tool has is a scripting error, answered 500 with the list.
func TestToolStepCallsMCPToolsAsEachCLINamesThem(t *testing.T) {
	s := Script{Entries: []Entry{{Name: "mcp", Match: "build it", Repeat: true,
		Steps: []Step{{Tool: &ToolUse{Name: "get_secret", Args: map[string]any{"k": "v"}}}, {Say: "ok"}}}}}
	srv := start(t, s, Options{})
	ns := map[string]any{"type": "namespace", "name": "mcp__db", "tools": []any{
		map[string]any{"type": "function", "name": "get_secret", "parameters": map[string]any{"type": "object"}}}}
	_, evs, _ := post(t, srv, "/v1/responses", responsesBody(0, codexTool, ns))
	var item any
	for _, e := range evs {
		if e.name == "response.output_item.done" {
			item = e.data["item"]
		}
	}
	if get(item, "name") != "get_secret" || get(item, "namespace") != "mcp__db" || get(item, "arguments") != `{"k":"v"}` {
		t.Errorf("namespaced call %v", item)
	}
	for _, name := range []string{"mcp__db__get_secret", "db_get_secret"} {
		tools := []any{map[string]any{"name": "Bash", "input_schema": map[string]any{}}, map[string]any{"name": name, "input_schema": map[string]any{}}}
		body := map[string]any{"model": "m", "stream": true, "messages": []any{map[string]any{"role": "user", "content": "build it"}}, "tools": tools}
		_, evs, _ := post(t, srv, "/v1/messages", body)
		if len(evs) < 3 || get(evs[2].data, "content_block", "name") != name {
			t.Errorf("%s: %v", name, evs)
		}
	}
	body := map[string]any{"model": "m", "stream": true, "messages": []any{map[string]any{"role": "user", "content": "build it"}},
		"tools": []any{map[string]any{"name": "Bash", "input_schema": map[string]any{}}}}
	code, _, text := post(t, srv, "/v1/messages", body)
	if code != 500 || !strings.Contains(text, "get_secret") || !strings.Contains(text, "Bash") {
		t.Errorf("unknown tool: %d %s", code, text)
	}
	if _, err := Start(Script{Entries: []Entry{{Match: "x", Steps: []Step{{Tool: &ToolUse{}}, {Say: "ok"}}}}}, Options{}); err == nil {
		t.Error("a tool step without a name was accepted")
	}
}
