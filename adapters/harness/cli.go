package harness

// Spec is a harness as an experiment config describes it; the catalogue
// (adapters/harness/catalogue) builds a Harness from it.
type Spec struct {
	Kind     string   `yaml:"harness" json:"harness"`
	Binary   string   `yaml:"binary,omitempty" json:"binary,omitempty"`
	Version  string   `yaml:"version,omitempty" json:"version,omitempty"`
	Provider Provider `yaml:"provider" json:"provider"`
	// Options are adapter-specific settings (e.g. codex "overrides").
	Options map[string]any `yaml:"options,omitempty" json:"options,omitempty"`
	// InContainer: the executor is itself a sandbox (a task container), so
	// adapters may drop their own sandboxing of write and exec roles.
	InContainer bool `yaml:"-" json:"-"`
}

// CLI is what hoh knows about one harness kind: each adapter package
// declares its own, and the catalogue lists them.
type CLI struct {
	// Kind is the name configs use (harness: codex).
	Kind string
	// Display is the name people know the CLI by ("Codex CLI").
	Display string
	// Executable is the command the npm package installs; empty when the
	// config names it (the command harness).
	Executable string
	// Package is the npm package scripts/install-harnesses.sh installs;
	// empty when hoh does not install the CLI.
	Package string
	// Pins are the CLI versions the adapter is written against; the first is
	// the default when a config names no version.
	Pins []string
	// APIs are the Provider.API values (wire APIs) the CLI speaks; the first
	// is the default when a config names none.
	APIs []string
	// New builds the adapter for one configuration.
	New func(Spec) (Harness, error)
}

// Pin is the default version: the first pin, or "" when none.
func (c CLI) Pin() string {
	if len(c.Pins) == 0 {
		return ""
	}
	return c.Pins[0]
}

// Speaks reports whether api is one of the CLI's wire APIs.
func (c CLI) Speaks(api string) bool {
	for _, a := range c.APIs {
		if a == api {
			return true
		}
	}
	return false
}

// Wire API names (Provider.API).
const (
	APIResponses = "responses" // OpenAI Responses
	APIChat      = "chat"      // OpenAI Chat Completions
	APIAnthropic = "anthropic" // Anthropic Messages
)

// APIs are every wire API some CLI speaks, in the order configs document them.
var APIs = []string{APIResponses, APIChat, APIAnthropic}
