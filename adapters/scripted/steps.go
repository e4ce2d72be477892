package scripted

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
)

// reply is one model answer in API-neutral form.
type reply struct {
	toolName  string // "" for a text answer
	namespace string // the Responses namespace of the tool, or ""
	args      string // JSON arguments of the tool call
	text      string
	usage     Usage
	delay     time.Duration // between stream events (a slow fault)
}

var (
	shellToolNames = []string{"exec_command", "bash", "Bash", "shell"}
	writeToolNames = []string{"write", "Write"}
)

func findTool(tools []tool, names []string) (tool, bool) {
	for _, n := range names {
		for _, t := range tools {
			if t.name == n {
				return t, true
			}
		}
	}
	return tool{}, false
}

// toolCall maps an abstract step onto a tool the request advertises.
func toolCall(st Step, tools []tool) (name, args string, err error) {
	if st.Tool != nil {
		return "", "", errors.New("a tool step is answered by namedTool")
	}
	if st.Write != nil {
		if t, ok := findTool(tools, writeToolNames); ok {
			pathKey := firstProp(t, "filePath", "file_path", "path")
			if pathKey != "" && t.has("content") {
				return t.name, mustJSON(map[string]any{pathKey: st.Write.Path, "content": st.Write.Content}), nil
			}
		}
		return shellCall(writeCommand(*st.Write), "Write "+st.Write.Path, tools)
	}
	return shellCall(st.Shell, "Run a shell command", tools)
}

// namedTool finds the tool a Tool step names: the advertised tool of that
// name (a namespace's first), else an MCP tool named mcp__SERVER__NAME or
// SERVER_NAME.
func namedTool(u ToolUse, tools []tool) (tool, string, error) {
	args := u.Args
	if args == nil {
		args = map[string]any{}
	}
	for _, match := range []func(tool) bool{
		func(t tool) bool { return t.name == u.Name && t.namespace != "" },
		func(t tool) bool { return t.name == u.Name },
		func(t tool) bool { return strings.HasPrefix(t.name, "mcp__") && strings.HasSuffix(t.name, "__"+u.Name) },
		func(t tool) bool { return strings.HasSuffix(t.name, "_"+u.Name) },
	} {
		for _, t := range tools {
			if match(t) {
				return t, mustJSON(args), nil
			}
		}
	}
	return tool{}, "", fmt.Errorf("no advertised tool is %q or an MCP tool of that name (advertised: %v)", u.Name, toolNamesOf(tools))
}

func shellCall(command, description string, tools []tool) (string, string, error) {
	t, ok := findTool(tools, shellToolNames)
	if !ok {
		return "", "", fmt.Errorf("step needs a shell tool but the request advertises %v", toolNamesOf(tools))
	}
	key := firstProp(t, "cmd", "command")
	if key == "" {
		return "", "", fmt.Errorf("shell tool %q has neither a cmd nor a command parameter", t.name)
	}
	args := map[string]any{}
	if t.propType(key) == "array" {
		args[key] = []string{"bash", "-lc", command}
	} else {
		args[key] = command
	}
	if t.has("description") {
		args["description"] = description
	}
	return t.name, mustJSON(args), nil
}

func firstProp(t tool, keys ...string) string {
	for _, k := range keys {
		if t.has(k) {
			return k
		}
	}
	return ""
}

func toolNamesOf(tools []tool) []string {
	var names []string
	for _, t := range tools {
		if t.namespace != "" {
			names = append(names, t.namespace+"/"+t.name)
			continue
		}
		names = append(names, t.name)
	}
	return names
}

// writeCommand writes a file through the shell. A quoted heredoc keeps the
// content literal; content that a heredoc cannot carry exactly (no final
// newline, or a line equal to the delimiter) goes through base64.
func writeCommand(w FileWrite) string {
	const delim = "HOH_SCRIPTED_EOF"
	p := shellQuote(w.Path)
	mkdir := ""
	if dir := path.Dir(w.Path); dir != "." && dir != "/" {
		mkdir = "mkdir -p " + shellQuote(dir) + " && "
	}
	lines := strings.Split(w.Content, "\n")
	if strings.HasSuffix(w.Content, "\n") && !slices.Contains(lines, delim) {
		return mkdir + "cat > " + p + " <<'" + delim + "'\n" + w.Content + delim
	}
	enc := base64.StdEncoding.EncodeToString([]byte(w.Content))
	return mkdir + "base64 -d > " + p + " <<'" + delim + "'\n" + enc + "\n" + delim
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps of strings are marshalled here
	}
	return string(b)
}
