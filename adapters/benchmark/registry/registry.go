// Package registry is the one list of benchmark kinds hoh knows. Config
// validation, planning, running (whether a run needs Docker) and `hoh tasks`
// look kinds up here; each kind is described by its adapter package (a
// kind.Kind: options, Open, List, Check, Reporting).
//
// Adding a benchmark kind: write its adapter package with a `var Kind =
// kind.Kind{...}` and add it to kinds below.
package registry

import (
	"fmt"
	"strings"
	"sync"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/benchmark/builtin"
	"github.com/hoh-research/hoh/adapters/benchmark/conformance"
	"github.com/hoh-research/hoh/adapters/benchmark/gamecraft"
	"github.com/hoh-research/hoh/adapters/benchmark/harbor"
	"github.com/hoh-research/hoh/adapters/benchmark/kind"
	"github.com/hoh-research/hoh/adapters/benchmark/programbench"
	"github.com/hoh-research/hoh/adapters/sandbox/docker"
)

var (
	mu    sync.RWMutex
	kinds = []kind.Kind{builtin.Kind, gamecraft.Kind, programbench.Kind, harbor.Kind}
)

// Register adds a kind at run time (tests register test-only kinds); it
// returns a function that removes it again. A name already registered is
// an error.
func Register(k kind.Kind) (unregister func(), err error) {
	mu.Lock()
	defer mu.Unlock()
	if k.Name == "" || k.Open == nil {
		return nil, fmt.Errorf("benchmark kind %q: a kind needs a name and Open", k.Name)
	}
	for _, have := range kinds {
		if have.Name == k.Name {
			return nil, fmt.Errorf("benchmark kind %q is already registered", k.Name)
		}
	}
	kinds = append(kinds, k)
	return func() {
		mu.Lock()
		defer mu.Unlock()
		for i, have := range kinds {
			if have.Name == k.Name {
				kinds = append(kinds[:i:i], kinds[i+1:]...)
				return
			}
		}
	}, nil
}

// Lookup returns the kind named name.
func Lookup(name string) (kind.Kind, bool) {
	mu.RLock()
	defer mu.RUnlock()
	for _, k := range kinds {
		if k.Name == name {
			return k, true
		}
	}
	return kind.Kind{}, false
}

// Kinds returns every registered kind, in registration order.
func Kinds() []kind.Kind {
	mu.RLock()
	defer mu.RUnlock()
	return append([]kind.Kind(nil), kinds...)
}

// Names lists the registered kinds' names, in registration order.
func Names() []string {
	var out []string
	for _, k := range Kinds() {
		out = append(out, k.Name)
	}
	return out
}

// Checkable lists the kinds `hoh tasks` can list and check (those with a
// checkout).
func Checkable() []string {
	var out []string
	for _, k := range Kinds() {
		if k.Check != nil && k.List != nil {
			out = append(out, k.Name)
		}
	}
	return out
}

// UnknownError is the error for a kind name nobody registered.
func UnknownError(name string) error {
	return fmt.Errorf("unknown benchmark kind %q (known: %s)", name, strings.Join(Names(), ", "))
}

func checkable(name string) (kind.Kind, error) {
	k, ok := Lookup(name)
	if !ok || k.Check == nil || k.List == nil {
		return kind.Kind{}, fmt.Errorf("conformance: unknown kind %q (known: %s)", name, strings.Join(Checkable(), ", "))
	}
	return k, nil
}

// Check checks the checkout at path against the detected host.
func Check(name, path string) (conformance.Report, error) {
	return CheckHost(name, path, conformance.DetectHost())
}

// CheckHost checks the checkout at path against the given host. The error
// is for an unknown kind only; everything wrong with the checkout is a
// Problem of the report.
func CheckHost(name, path string, host conformance.Host) (conformance.Report, error) {
	r := conformance.Report{Kind: name, Root: path, Host: host}
	k, err := checkable(name)
	if err != nil {
		return r, err
	}
	k.Check(&r)
	r.Sort()
	return r, nil
}

// List loads the checkout and returns its tasks; any load problem is an error.
func List(name, path string) ([]benchmark.Task, error) {
	k, err := checkable(name)
	if err != nil {
		return nil, err
	}
	return k.List(path)
}

// Spec is a config's benchmark section.
type Spec struct {
	Kind    string
	Path    string         // resolved against the config's folder
	Options map[string]any // as written
	// Resolve resolves Path options against the config's folder (nil: as
	// written).
	Resolve func(string) string
}

// UsesDocker reports whether a run of spec needs Docker (kind.Kind.UsesDocker);
// an unknown kind or bad options say no here and are refused by Open.
func UsesDocker(s Spec) bool {
	k, ok := Lookup(s.Kind)
	if !ok {
		return false
	}
	vals, errs := k.ParseOptions(s.Options, s.Resolve)
	return len(errs) == 0 && k.UsesDocker(vals)
}

// Open opens the benchmark spec names. The Docker client is given to kinds
// that need it (kind.Kind.UsesDocker) when a run has one; nil
// when only planning. Problems with the options are a kind.OptionErrors
// (all of them) or, for an option only a run needs, a *kind.OptionError.
func Open(s Spec, c *docker.Client) (benchmark.Benchmark, error) {
	k, ok := Lookup(s.Kind)
	if !ok {
		return nil, UnknownError(s.Kind)
	}
	vals, errs := k.ParseOptions(s.Options, s.Resolve)
	if len(errs) > 0 {
		return nil, errs
	}
	o := kind.Opening{Path: s.Path, Options: vals}
	if k.UsesDocker(vals) {
		o.Docker = c
	}
	return k.Open(o)
}
