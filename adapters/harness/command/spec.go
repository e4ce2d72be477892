// Package command is the generic "command" harness (the process plumbing it
// shares with the built-in adapters lives in cliproc): any
// CLI described in YAML (configs/harnesses/*.yaml) by its argv template, how
// it takes the prompt, its state-dir variables, and where its JSON/JSONL
// output carries the final message, session id, tool calls and usage.
//
// # Spec format
//
//	name: pi
//	binary: pi                 # name (found like the built-in adapters) or path
//	version: 0.73.1            # optional pin, checked against the npm package
//	prompt: argv               # argv | stdin | file ({{.PromptFile}})
//	args: [-p, --mode, json, "{{if .Session}}--session{{end}}", "{{.Session}}", "{{.Prompt}}"]
//	state_env: [PI_CODING_AGENT_DIR, HOME]   # set to the invocation's StateDir
//	env: {PI_OFFLINE: "1"}
//	files: {settings.json: '{"retry":{"enabled":false}}'}   # written under StateDir
//	output:
//	  session: {type: session, path: id}
//	  final:   {type: message_end, where: {message.role: assistant}, path: "message.content.*.text"}
//	  tools:   {type: tool_execution_start, path: toolName, args: args}
//	  completed: {type: agent_end}
//	  usage:
//	    type: message_end
//	    where: {message.role: assistant}
//	    mode: sum              # sum over matching events, or last
//	    input: [message.usage.input, message.usage.cacheRead]
//	    cached: [message.usage.cacheRead]
//	    output: [message.usage.output]
//	failure:
//	  - {type: message_end, where: {message.stopReason: error}, path: message.errorMessage}
//
// Every args element, env value and file is a text/template over Data;
// an args element that renders empty is dropped, so conditional flags are
// written as {{if ...}}. Functions: json (a JSON string literal), trimV1
// (a base URL without its /v1 suffix). The key VALUE is never template
// data: the CLI gets the variable Provider.KeyEnv in its environment and
// files can only name it.
//
// Paths are dot-separated keys; "*" visits every element of an array (or
// value of an object), a number indexes an array.
package command

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/template"

	"gopkg.in/yaml.v3"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/runrecord"
)

// Spec describes a CLI for the generic command harness.
type Spec struct {
	Name    string `yaml:"name"`
	Binary  string `yaml:"binary"`
	Version string `yaml:"version,omitempty"`
	// Package is the npm package installing Binary; with Version, hoh finds
	// it where scripts/install-harnesses.sh puts that package@version.
	Package  string            `yaml:"package,omitempty"`
	Prompt   string            `yaml:"prompt"`
	Args     []string          `yaml:"args"`
	StateEnv []string          `yaml:"state_env,omitempty"`
	Env      map[string]string `yaml:"env,omitempty"`
	Files    map[string]string `yaml:"files,omitempty"`
	Output   OutputSpec        `yaml:"output"`
	Failure  []Selector        `yaml:"failure,omitempty"`

	args  []*template.Template
	env   map[string]*template.Template
	files map[string]*template.Template
}

// OutputSpec says where the CLI's JSON output carries each result.
type OutputSpec struct {
	Session   *Selector  `yaml:"session,omitempty"`
	Final     *Selector  `yaml:"final,omitempty"`
	Tools     *Selector  `yaml:"tools,omitempty"`
	Completed *Selector  `yaml:"completed,omitempty"`
	Usage     *UsageSpec `yaml:"usage,omitempty"`
}

// Selector picks JSON events: those whose "type" field equals Type (any
// event when empty) and whose Where paths equal the given strings. Path is
// the value taken from a selected event; Args is a second value (a tool
// call's arguments).
type Selector struct {
	Type  string            `yaml:"type,omitempty"`
	Where map[string]string `yaml:"where,omitempty"`
	Path  string            `yaml:"path,omitempty"`
	Args  string            `yaml:"args,omitempty"`
}

// UsageSpec says which numbers of the selected events make up each usage
// field; each field is the sum of its paths. Mode "sum" adds every selected
// event (one per model call), "last" keeps the last one (running totals).
type UsageSpec struct {
	Selector  `yaml:",inline"`
	Mode      string   `yaml:"mode"`
	Input     []string `yaml:"input"`
	Cached    []string `yaml:"cached,omitempty"`
	Output    []string `yaml:"output"`
	Reasoning []string `yaml:"reasoning,omitempty"`
}

// Data is what the templates see.
type Data struct {
	Prompt     string
	PromptFile string
	Model      string
	WorkDir    string
	StateDir   string
	Session    string
	Role       runrecord.Role
	Access     harness.Access
	ReadOnly   bool // the Planner: no write or shell tools
	Provider   harness.Provider
}

var funcs = template.FuncMap{
	"json": func(s string) string { b, _ := json.Marshal(s); return string(b) },
	"trimV1": func(s string) string {
		return strings.TrimSuffix(strings.TrimSuffix(s, "/"), "/v1")
	},
}

// LoadSpec reads and validates a YAML spec.
func LoadSpec(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("command: %w", err)
	}
	var s Spec
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("command: %s: %w", path, err)
	}
	if err := s.compile(); err != nil {
		return nil, fmt.Errorf("command: %s: %w", path, err)
	}
	return &s, nil
}

func (s *Spec) compile() error {
	if s.Name == "" || s.Binary == "" {
		return fmt.Errorf("name and binary are required")
	}
	switch s.Prompt {
	case "argv", "stdin", "file":
	default:
		return fmt.Errorf("prompt must be argv, stdin or file, got %q", s.Prompt)
	}
	if len(s.Args) == 0 {
		return fmt.Errorf("args is empty")
	}
	var err error
	mk := func(name, text string) *template.Template {
		t, e := template.New(name).Funcs(funcs).Option("missingkey=error").Parse(text)
		if e != nil && err == nil {
			err = fmt.Errorf("%s: %w", name, e)
		}
		return t
	}
	s.args = nil
	for i, a := range s.Args {
		s.args = append(s.args, mk(fmt.Sprintf("args[%d]", i), a))
	}
	s.env = map[string]*template.Template{}
	for k, v := range s.Env {
		s.env[k] = mk("env."+k, v)
	}
	s.files = map[string]*template.Template{}
	for k, v := range s.Files {
		if strings.Contains(k, "..") || strings.HasPrefix(k, "/") {
			return fmt.Errorf("files: %q must be a relative path inside the state dir", k)
		}
		s.files[k] = mk("files."+k, v)
	}
	if err != nil {
		return err
	}
	if u := s.Output.Usage; u != nil {
		if u.Mode != "sum" && u.Mode != "last" {
			return fmt.Errorf("output.usage.mode must be sum or last, got %q", u.Mode)
		}
		if len(u.Input) == 0 || len(u.Output) == 0 {
			return fmt.Errorf("output.usage needs input and output paths")
		}
	}
	if s.Output.Completed == nil {
		return fmt.Errorf("output.completed is required: the exit code alone does not say a turn finished")
	}
	for i, f := range s.Failure {
		if f.Type == "" && len(f.Where) == 0 {
			return fmt.Errorf("failure[%d] selects every event: give a type or where", i)
		}
	}
	return nil
}

func render(t *template.Template, d Data) (string, error) {
	var b strings.Builder
	if err := t.Execute(&b, d); err != nil {
		return "", err
	}
	return b.String(), nil
}

// lookup returns the values at path in v.
func lookup(v any, path string) []any {
	if path == "" {
		return []any{v}
	}
	key, rest, _ := strings.Cut(path, ".")
	var next []any
	switch x := v.(type) {
	case map[string]any:
		if key == "*" {
			for _, e := range x {
				next = append(next, e)
			}
		} else if e, ok := x[key]; ok {
			next = append(next, e)
		}
	case []any:
		if key == "*" {
			next = x
		} else {
			var i int
			if _, err := fmt.Sscan(key, &i); err == nil && i >= 0 && i < len(x) {
				next = append(next, x[i])
			}
		}
	}
	var out []any
	for _, e := range next {
		out = append(out, lookup(e, rest)...)
	}
	return out
}

// matches reports whether event ev is selected by sel.
func (sel *Selector) matches(ev map[string]any) bool {
	if sel.Type != "" {
		if t, _ := ev["type"].(string); t != sel.Type {
			return false
		}
	}
	for path, want := range sel.Where {
		ok := false
		for _, v := range lookup(ev, path) {
			if scalarString(v) == want {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// text joins the string values at path.
func text(ev map[string]any, path string) string {
	var parts []string
	for _, v := range lookup(ev, path) {
		if s := scalarString(v); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n")
}

func scalarString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	case float64, bool:
		return fmt.Sprint(x)
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

func sum(ev map[string]any, paths []string) int64 {
	var n int64
	for _, p := range paths {
		for _, v := range lookup(ev, p) {
			if f, ok := v.(float64); ok {
				n += int64(f)
			}
		}
	}
	return n
}
