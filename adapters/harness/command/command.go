package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/harness/cliinstall"
	"github.com/hoh-research/hoh/adapters/harness/cliproc"
	"github.com/hoh-research/hoh/runrecord"
)

// CLI is the command entry of the harness catalogue: the executable, its
// version and what it speaks come from the YAML spec (option spec).
var CLI = harness.CLI{
	Kind: "command", Display: "command harness (a CLI described in YAML)",
	APIs: harness.APIs, New: build,
	// hoh knows no YAML-described CLI's MCP or skills configuration.
	ToolSupport: func(string, harness.TaskTools) error {
		return errors.New("a command harness (a CLI described in YAML) is given no MCP servers or skills: hoh does not know its configuration for them")
	},
}

func build(s harness.Spec) (harness.Harness, error) {
	path, ok := s.Options["spec"].(string)
	if !ok || path == "" {
		return nil, fmt.Errorf("command harness needs option spec: the path of a YAML CLI description (see configs/harnesses)")
	}
	spec, err := LoadSpec(path)
	if err != nil {
		return nil, err
	}
	if s.Binary != "" {
		spec.Binary = s.Binary
	}
	if s.Version != "" {
		spec.Version = s.Version
	}
	return New(spec, s.Provider)
}

// Harness is a CLI described by a Spec.
type Harness struct {
	spec     *Spec
	binary   string
	provider harness.Provider
}

var _ harness.Harness = (*Harness)(nil)

// New builds the generic harness for spec and provider. When spec pins a
// version, an installed npm package of another version is an error.
func New(spec *Spec, p harness.Provider) (*Harness, error) {
	if spec == nil {
		return nil, fmt.Errorf("command: no spec")
	}
	if p.KeyEnv == "" || p.Model == "" {
		return nil, fmt.Errorf("command %s: provider needs key_env and model (got %+v)", spec.Name, p)
	}
	bin := spec.Binary
	if spec.Package != "" && spec.Version != "" && !strings.Contains(bin, "/") {
		found, err := cliinstall.FindVersion(spec.Package, bin, spec.Version)
		if err != nil {
			return nil, fmt.Errorf("command %s: %w", spec.Name, err)
		}
		bin = found
	} else if !filepath.IsAbs(bin) {
		found, err := cliinstall.Find(bin)
		if err != nil {
			return nil, fmt.Errorf("command %s: %w", spec.Name, err)
		}
		bin = found
	}
	if spec.Version != "" {
		if v, err := cliinstall.InstalledVersion(bin); err == nil && v != spec.Version {
			return nil, fmt.Errorf("command %s: %s is version %s, want %s", spec.Name, bin, v, spec.Version)
		}
	}
	return &Harness{spec: spec, binary: bin, provider: p}, nil
}

func (h *Harness) Name() string    { return h.spec.Name }
func (h *Harness) Binary() string  { return h.binary }
func (h *Harness) Version() string { return h.spec.Version }

// Endpoint is the model endpoint's base URL (harness.Endpointer).
func (h *Harness) Endpoint() string { return h.provider.BaseURL }

// Run performs one invocation; see harness.Harness.
func (h *Harness) Run(ctx context.Context, inv harness.Invocation) (runrecord.Result, error) {
	name := "command " + h.spec.Name
	key, err := cliproc.Prepare(name, inv, h.provider.KeyEnv)
	if err != nil {
		return runrecord.Result{}, err
	}
	d := Data{
		Prompt: inv.Prompt, Model: h.provider.Model, WorkDir: inv.WorkDir, StateDir: inv.StateDir,
		Session: inv.Session, Role: inv.Role, Access: inv.Access, Provider: h.provider,
		ReadOnly: inv.Access != harness.AccessWrite && inv.Access != harness.AccessExec,
	}
	stdin := ""
	switch h.spec.Prompt {
	case "stdin":
		stdin = inv.Prompt
	case "file":
		d.PromptFile = filepath.Join(inv.StateDir, "hoh-prompt.txt")
		if err := os.WriteFile(d.PromptFile, []byte(inv.Prompt), 0o644); err != nil {
			return runrecord.Result{}, fmt.Errorf("%s: %w", name, err)
		}
	}
	for _, rel := range sortedKeys(h.spec.files) {
		content, err := render(h.spec.files[rel], d)
		if err != nil {
			return runrecord.Result{}, fmt.Errorf("%s: %w", name, err)
		}
		p := filepath.Join(inv.StateDir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return runrecord.Result{}, fmt.Errorf("%s: %w", name, err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			return runrecord.Result{}, fmt.Errorf("%s: %w", name, err)
		}
	}
	args := []string{h.binary}
	for _, t := range h.spec.args {
		a, err := render(t, d)
		if err != nil {
			return runrecord.Result{}, fmt.Errorf("%s: %w", name, err)
		}
		if a != "" {
			args = append(args, a)
		}
	}
	var env []string
	for _, v := range h.spec.StateEnv {
		env = append(env, v+"="+inv.StateDir)
	}
	for _, k := range sortedKeys(h.spec.env) {
		v, err := render(h.spec.env[k], d)
		if err != nil {
			return runrecord.Result{}, fmt.Errorf("%s: %w", name, err)
		}
		env = append(env, k+"="+v)
	}
	env = append(env, h.provider.KeyEnv+"="+key)
	env = append(env, inv.Env...)

	proc, err := cliproc.Execute(ctx, inv, cliproc.Launch{Args: args, Env: env, Stdin: stdin, Secrets: []string{key},
		Note: map[string]any{"spec": h.spec.Name, "prompt": h.spec.Prompt}})
	if err != nil {
		return runrecord.Result{}, fmt.Errorf("%s: %w", name, err)
	}
	return cliproc.Conclude(ctx, name, inv, proc, h.extract)
}

// extract reads the JSON events as the spec's output section says.
func (h *Harness) extract(raw []json.RawMessage) cliproc.Report {
	out := h.spec.Output
	var res cliproc.Report
	for _, line := range raw {
		var ev map[string]any
		if json.Unmarshal(line, &ev) != nil {
			continue
		}
		if s := out.Session; s != nil && s.matches(ev) {
			if id := text(ev, s.Path); id != "" {
				res.SessionID = id
			}
		}
		if s := out.Final; s != nil && s.matches(ev) {
			if t := text(ev, s.Path); t != "" {
				res.FinalMessage = t
			}
		}
		if s := out.Tools; s != nil && s.matches(ev) {
			res.Tools = append(res.Tools, runrecord.ToolCall{Name: text(ev, s.Path), Input: text(ev, s.Args)})
		}
		if out.Completed.matches(ev) {
			res.Completed = true
		}
		if u := out.Usage; u != nil && u.matches(ev) {
			in, outTok := sum(ev, u.Input), sum(ev, u.Output)
			got := runrecord.Usage{Input: in, CachedInput: sum(ev, u.Cached), Output: outTok,
				Reasoning: sum(ev, u.Reasoning), Total: in + outTok}
			if u.Mode == "last" {
				res.Usage = got
			} else {
				res.Usage = res.Usage.Add(got)
			}
		}
		for _, f := range h.spec.Failure {
			if f.matches(ev) {
				msg := text(ev, f.Path)
				if msg == "" {
					msg = fmt.Sprintf("failure event %s", line)
				}
				res.Problems = append(res.Problems, msg)
			}
		}
	}
	return res
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
