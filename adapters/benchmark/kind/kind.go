// Package kind describes one benchmark kind to hoh: the options a config may
// give it (names, types, what they mean), how it opens (with the run's
// Docker client when its agents work in containers), how `hoh tasks` lists
// and checks a checkout of it, and how reports name its records. Every
// adapter package declares one Kind; adapters/benchmark/registry lists them.
package kind

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/benchmark/conformance"
	"github.com/hoh-research/hoh/adapters/sandbox/docker"
	"github.com/hoh-research/hoh/runrecord"
)

// Kind is everything hoh needs to know about one benchmark kind.
type Kind struct {
	// Name is what configs write as benchmark.kind.
	Name string
	// NeedsPath: the config must name the benchmark's data (benchmark.path).
	NeedsPath bool
	// NeedsDocker: a run connects to Docker before Open and passes the
	// client in Opening.Docker. Every kind whose agents work in task
	// containers (an environment.ContainerBenchmark) needs it; a kind may
	// also need it only to evaluate.
	NeedsDocker bool
	// DockerWhen, for a kind that needs Docker only with some options
	// (GameCraft's agent_environment: docker), says whether these do.
	DockerWhen func(Values) bool
	// Options is the schema of benchmark.options; anything else is refused.
	Options []Option
	// Open builds the benchmark from a config's benchmark section.
	Open func(o Opening) (benchmark.Benchmark, error)
	// List loads a checkout's tasks for `hoh tasks list|show`; any load
	// problem is an error. Nil: the kind has no checkout (builtin).
	List func(path string) ([]benchmark.Task, error)
	// Check adds to r every problem of the checkout at r.Root (`hoh tasks
	// check`): files that do not load, unknown fields, needs the host lacks.
	// Nil: the kind has no checkout.
	Check func(r *conformance.Report)
	// Reporting names the kind's records in reports and gives their
	// primary metric (see runrecord.ReportingOf for why it is a table there).
	Reporting runrecord.Reporting
}

// ListOf is a List for kinds whose loader reads the whole checkout.
func ListOf[B benchmark.Benchmark](load func(path string) (B, error)) func(path string) ([]benchmark.Task, error) {
	return func(path string) ([]benchmark.Task, error) {
		b, err := load(path)
		if err != nil {
			return nil, err
		}
		return b.Tasks(context.Background())
	}
}

// Opening is what Open gets.
type Opening struct {
	// Path is benchmark.path resolved against the config's folder ("" if
	// the config gives none).
	Path string
	// Options are benchmark.options, checked against the schema, with Path
	// options resolved against the config's folder.
	Options Values
	// Docker is the run's client for NeedsDocker kinds. It is nil when hoh
	// only plans (hoh run --check, tests): Open must still list the tasks
	// then, and check what only a run needs only when Docker is given.
	Docker *docker.Client
}

// Type of an option value.
type Type int

const (
	String   Type = iota
	Bool          // true or false
	Number        // an integer or a float
	Duration      // a Go duration string such as 10m
	Path          // a string resolved against the config's folder
)

func (t Type) want() string {
	switch t {
	case Bool:
		return "true or false"
	case Number:
		return "a number"
	case Duration:
		return "a duration such as 10m"
	}
	return "a string"
}

// Option is one key of benchmark.options.
type Option struct {
	Name string
	Type Type
	Doc  string // what it does, its default
}

// OptionError is a problem with one option; configs report it at the line
// of that option.
type OptionError struct {
	Option string
	Msg    string
}

func (e *OptionError) Error() string { return e.Msg }

// OptionErrors are every problem ParseOptions found.
type OptionErrors []*OptionError

func (es OptionErrors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Msg
	}
	return strings.Join(msgs, "; ")
}

// UsesDocker reports whether a benchmark of this kind opened with v needs
// the run's Docker client (NeedsDocker, or DockerWhen says so).
func (k Kind) UsesDocker(v Values) bool {
	return k.NeedsDocker || (k.DockerWhen != nil && k.DockerWhen(v))
}

// Values are checked option values. Accessors return the zero value for an
// option the config does not give.
type Values struct{ m map[string]any }

// NewValues wraps already checked values (tests).
func NewValues(m map[string]any) Values { return Values{m: m} }

// Str is a String or Path option ("" if unset).
func (v Values) Str(name string) string { s, _ := v.m[name].(string); return s }

// Bool is a Bool option (false if unset).
func (v Values) Bool(name string) bool { b, _ := v.m[name].(bool); return b }

// Number is a Number option (0 if unset).
func (v Values) Number(name string) float64 { f, _ := v.m[name].(float64); return f }

// Duration is a Duration option (0 if unset).
func (v Values) Duration(name string) time.Duration { d, _ := v.m[name].(time.Duration); return d }

// ParseOptions checks raw (a config's benchmark.options) against the
// schema and resolves Path options with resolve (nil: kept as given). Every problem is returned,
// unknown names first (sorted), then wrong values in schema order.
func (k Kind) ParseOptions(raw map[string]any, resolve func(string) string) (Values, OptionErrors) {
	var errs OptionErrors
	known := map[string]Option{}
	var names []string
	for _, o := range k.Options {
		known[o.Name] = o
		names = append(names, o.Name)
	}
	sort.Strings(names)
	var unknown []string
	for name := range raw {
		if _, ok := known[name]; !ok {
			unknown = append(unknown, name)
		}
	}
	sort.Strings(unknown)
	for _, name := range unknown {
		if len(names) == 0 {
			errs = append(errs, &OptionError{name, fmt.Sprintf("benchmark %s takes no options, got %q", k.Name, name)})
		} else {
			errs = append(errs, &OptionError{name, fmt.Sprintf("unknown benchmark option %q for %s (known: %s)", name, k.Name, strings.Join(names, ", "))})
		}
	}
	vals := Values{m: map[string]any{}}
	for _, o := range k.Options {
		v, ok := raw[o.Name]
		if !ok || v == nil {
			continue
		}
		parsed, good := parse(o.Type, v)
		if !good {
			errs = append(errs, &OptionError{o.Name, fmt.Sprintf("benchmark option %s: want %s, got %v", o.Name, o.Type.want(), v)})
			continue
		}
		if s, isStr := parsed.(string); isStr && o.Type == Path && s != "" && resolve != nil {
			parsed = resolve(s)
		}
		vals.m[o.Name] = parsed
	}
	return vals, errs
}

func parse(t Type, v any) (any, bool) {
	switch t {
	case Bool:
		b, ok := v.(bool)
		return b, ok
	case Number:
		switch n := v.(type) {
		case int:
			return float64(n), true
		case int64:
			return float64(n), true
		case float64:
			return n, true
		}
		return nil, false
	case Duration:
		s, ok := v.(string)
		if !ok {
			return nil, false
		}
		if s == "" {
			return time.Duration(0), true
		}
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return nil, false
		}
		return d, true
	}
	s, ok := v.(string)
	return s, ok
}
