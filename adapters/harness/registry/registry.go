// Package registry builds a harness.Harness from its configuration, so the
// experiment runner can name harnesses by kind in YAML without knowing the
// adapters.
package registry

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/harness/claude"
	"github.com/hoh-research/hoh/adapters/harness/codex"
	"github.com/hoh-research/hoh/adapters/harness/command"
	"github.com/hoh-research/hoh/adapters/harness/opencode"
	"github.com/hoh-research/hoh/adapters/harness/pi"
)

// Spec is a harness as an experiment config describes it.
type Spec struct {
	Kind     string           `yaml:"harness" json:"harness"`
	Binary   string           `yaml:"binary,omitempty" json:"binary,omitempty"`
	Version  string           `yaml:"version,omitempty" json:"version,omitempty"`
	Provider harness.Provider `yaml:"provider" json:"provider"`
	// Options are adapter-specific settings (e.g. codex "overrides").
	Options map[string]any `yaml:"options,omitempty" json:"options,omitempty"`
	// InContainer: the executor is itself a sandbox (a task container), so
	// adapters may drop their own sandboxing of write and exec roles.
	InContainer bool `yaml:"-" json:"-"`
}

type builder func(Spec) (harness.Harness, error)

var builders = map[string]builder{
	"codex": func(s Spec) (harness.Harness, error) {
		cfg := codex.Config{Binary: s.Binary, Version: s.Version, Provider: s.Provider, BypassSandbox: s.InContainer}
		if o, ok := s.Options["overrides"]; ok {
			list, ok := o.([]any)
			if !ok {
				return nil, fmt.Errorf("codex option overrides must be a list of key=value strings")
			}
			for _, v := range list {
				cfg.Overrides = append(cfg.Overrides, fmt.Sprint(v))
			}
		}
		return codex.New(cfg)
	},
	"claude": func(s Spec) (harness.Harness, error) {
		return claude.New(claude.Config{Binary: s.Binary, Version: s.Version, Provider: s.Provider})
	},
	"command": func(s Spec) (harness.Harness, error) {
		path, ok := s.Options["spec"].(string)
		if !ok || path == "" {
			return nil, fmt.Errorf("command harness needs option spec: the path of a YAML CLI description (see configs/harnesses)")
		}
		spec, err := command.LoadSpec(path)
		if err != nil {
			return nil, err
		}
		if s.Binary != "" {
			spec.Binary = s.Binary
		}
		if s.Version != "" {
			spec.Version = s.Version
		}
		return command.New(spec, s.Provider)
	},
	"opencode": func(s Spec) (harness.Harness, error) {
		return opencode.New(opencode.Config{Binary: s.Binary, Version: s.Version, Provider: s.Provider})
	},
	"pi": func(s Spec) (harness.Harness, error) {
		return pi.New(pi.Config{Binary: s.Binary, Version: s.Version, Provider: s.Provider})
	},
}

// apis are the provider wire APIs each built-in adapter speaks; a command
// harness says nothing here (its YAML description decides).
var apis = map[string][]string{
	"codex":    {"responses"},
	"claude":   {"anthropic"},
	"opencode": {"chat", "responses", "anthropic"},
	"pi":       {"chat", "responses", "anthropic"},
}

// APIs lists the provider APIs harness kind speaks, or nil when unknown.
func APIs(kind string) []string { return apis[kind] }

// Executables are the CLI executable names of the built-in kinds.
var Executables = map[string]string{"codex": "codex", "claude": "claude", "opencode": "opencode", "pi": "pi"}

// Kinds lists the harness kinds hoh knows.
func Kinds() []string {
	var out []string
	for k := range builders {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Known reports whether kind names a harness adapter.
func Known(kind string) bool { _, ok := builders[kind]; return ok }

// New builds the harness a Spec describes.
func New(s Spec) (harness.Harness, error) {
	b, ok := builders[s.Kind]
	if !ok {
		return nil, fmt.Errorf("unknown harness %q (known: %s)", s.Kind, strings.Join(Kinds(), ", "))
	}
	return b(s)
}
