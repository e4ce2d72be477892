// Package catalogue lists the harness kinds hoh can drive. Each adapter
// package declares its own entry (harness.CLI: constructor, executable, npm
// package, pinned versions, display name, wire APIs); adding a CLI is one
// adapter package plus one line in entries. The experiment config, doctor,
// testenv and scripts/install-harnesses.sh (through `hoh harnesses pins`)
// read this list.
package catalogue

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

// entries: one line per harness kind.
var entries = []harness.CLI{
	claude.CLI,
	codex.CLI,
	command.CLI,
	opencode.CLI,
	pi.CLI,
}

// All returns every entry, sorted by kind.
func All() []harness.CLI {
	out := append([]harness.CLI(nil), entries...)
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}

// Kinds lists the harness kinds, sorted.
func Kinds() []string {
	var out []string
	for _, e := range All() {
		out = append(out, e.Kind)
	}
	return out
}

// Known reports whether kind names a harness adapter.
func Known(kind string) bool { _, ok := Lookup(kind); return ok }

// Lookup finds the entry of kind.
func Lookup(kind string) (harness.CLI, bool) {
	for _, e := range entries {
		if e.Kind == kind {
			return e, true
		}
	}
	return harness.CLI{}, false
}

// ByExecutable finds the entry whose npm package installs executable name.
func ByExecutable(name string) (harness.CLI, bool) {
	for _, e := range entries {
		if e.Executable != "" && e.Executable == name {
			return e, true
		}
	}
	return harness.CLI{}, false
}

// New builds the harness a Spec describes.
func New(s harness.Spec) (harness.Harness, error) {
	e, ok := Lookup(s.Kind)
	if !ok {
		return nil, UnknownKind(s.Kind)
	}
	return e.New(s)
}

// UnknownKind is the error for a kind the catalogue does not list.
func UnknownKind(kind string) error {
	return fmt.Errorf("unknown harness %q (known: %s)", kind, strings.Join(Kinds(), ", "))
}

// NPMPins lists package@version for every pinned version of every CLI hoh
// installs with npm, in kind order (what scripts/install-harnesses.sh
// installs).
func NPMPins() []string {
	var out []string
	for _, e := range All() {
		if e.Package == "" {
			continue
		}
		for _, v := range e.Pins {
			out = append(out, e.Package+"@"+v)
		}
	}
	return out
}
