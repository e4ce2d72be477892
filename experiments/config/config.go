// Package config reads an experiment config (YAML): which benchmark and
// tasks, which harness-model configurations, which conditions, how many
// repetitions, and the limits a run works under. Validation reports every
// problem at once, each with file:line, before anything runs.
package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	benchmarks "github.com/hoh-research/hoh/adapters/benchmark/registry"
	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/harness/catalogue"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/adapters/sandbox/docker"
	"github.com/hoh-research/hoh/adapters/scripted"
	"github.com/hoh-research/hoh/experiments/conditions"
	"github.com/hoh-research/hoh/runrecord"
)

// ScriptedProvider is the provider name that makes hoh start the scripted
// test-double provider instead of talking to a model.
const ScriptedProvider = runrecord.ScriptedProvider

// ScriptedNotice is printed and recorded wherever a scripted run reports.
const ScriptedNotice = "the model is the scripted test double (" + scripted.Marker + "): scores are a plumbing check, not results"

// Experiment is one experiment config.
type Experiment struct {
	Name        string         `yaml:"name" json:"name"`
	Output      string         `yaml:"output" json:"output"`
	Benchmark   BenchmarkSpec  `yaml:"benchmark" json:"benchmark"`
	Tasks       TaskSelection  `yaml:"tasks" json:"tasks"`
	Configs     []HarnessModel `yaml:"configs" json:"configs"`
	Conditions  []string       `yaml:"conditions" json:"conditions"`
	Repetitions int            `yaml:"repetitions" json:"repetitions"`
	Concurrency int            `yaml:"concurrency" json:"concurrency"`
	Timeouts    Timeouts       `yaml:"timeouts" json:"timeouts"`
	Retries     Retries        `yaml:"retries" json:"retries"`
	Budget      Budget         `yaml:"budget" json:"budget"`
	Containers  Containers     `yaml:"containers" json:"containers"`
	// Limits bound each host role invocation; absent: the defaults.
	Limits *RoleLimits `yaml:"limits" json:"limits,omitempty"`
	// Prices are USD per million tokens by provider/model (prices.go);
	// they price what ran and change nothing about how it runs.
	Prices PriceTable `yaml:"prices" json:"-"`
	// Export names formats each finished trial is also written in: atif.
	Export []string `yaml:"export" json:"export,omitempty"`
	// Factorial adds a design's role teams to Configs when loaded (factorial.go).
	Factorial *Factorial `yaml:"factorial" json:"factorial,omitempty"`

	// File is the config's path as given; every relative path inside it
	// (output, benchmark path and options, binaries, scripts) is made
	// absolute against its directory once, when the config is loaded.
	File string `yaml:"-" json:"-"`
	// dir is the absolute directory of File; written holds the paths as the
	// config wrote them, which identify the experiment wherever the
	// checkout lies (Canonical).
	dir     string
	written writtenPaths
	// Lines maps a key path ("output", "configs[1].binary", "tasks.ids[0]")
	// to its line in File, for problems found after parsing.
	Lines map[string]int `yaml:"-" json:"-"`
}

// Caps on the sizes a config may ask for: beyond them a typo (hoh@100000)
// would silently plan a run nobody can pay for.
const (
	MaxSteps       = 50
	MaxRepetitions = 100
	MaxConcurrency = 256
)

// Line returns the line of a key path (see Lines), or of its nearest
// ancestor that has one, or 0.
func (e *Experiment) Line(path string) int {
	for path != "" {
		if n, ok := e.Lines[path]; ok {
			return n
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return 0
}

// Problem returns a Problem at the line of key path.
func (e *Experiment) Problem(path, format string, args ...any) Problem {
	return Problem{File: e.File, Line: e.Line(path), Msg: fmt.Sprintf(format, args...)}
}

// BenchmarkSpec names the benchmark adapter and its data.
type BenchmarkSpec struct {
	Kind string `yaml:"kind" json:"kind"` // a kind of adapters/benchmark/registry
	Path string `yaml:"path,omitempty" json:"path,omitempty"`
	// Options per kind: the Options of the kind's registration
	// (adapters/benchmark/registry; each adapter's kind.go documents them).
	Options map[string]any `yaml:"options,omitempty" json:"options,omitempty"`
}

// TaskSelection picks tasks: exactly one of the fields (none = all tasks).
type TaskSelection struct {
	IDs    []string `yaml:"ids,omitempty" json:"ids,omitempty"`
	Glob   []string `yaml:"glob,omitempty" json:"glob,omitempty"`
	Sample *Sample  `yaml:"sample,omitempty" json:"sample,omitempty"`
	Named  string   `yaml:"named,omitempty" json:"named,omitempty"`
}

// Sample is a seeded stratified sample of K tasks per stratum.
type Sample struct {
	Per  string `yaml:"per" json:"per"` // "family"
	K    int    `yaml:"k" json:"k"`
	Seed int64  `yaml:"seed" json:"seed"`
}

// HarnessModel is one harness-model configuration: a label, the agent
// every role runs unless roles: gives a role its own, and how many trials
// of it may run at once.
type HarnessModel struct {
	Label       string `yaml:"label" json:"label"`
	AgentSpec   `yaml:",inline"`
	Concurrency int `yaml:"concurrency,omitempty" json:"concurrency,omitempty"`
	// Roles gives a role its own agent (a role team, docs/roles.md); a role
	// not given runs the entry's harness and provider.
	Roles *RoleAgents `yaml:"roles,omitempty" json:"roles,omitempty"`
	// Factors are the agent names a factorial design assigned to each role
	// ("planner" -> "strong"); set by the design's expansion, never written.
	Factors map[string]string `yaml:"-" json:"factors,omitempty"`
}

// AgentSpec is one agent a role can be given: a CLI, its version and the
// provider it talks to. Name is the agent's name in a factorial design
// (empty for a configuration's own agent).
type AgentSpec struct {
	Name     string           `yaml:"-" json:"name,omitempty"`
	Harness  string           `yaml:"harness" json:"harness,omitempty"`
	Binary   string           `yaml:"binary,omitempty" json:"binary,omitempty"`
	Version  string           `yaml:"version,omitempty" json:"version,omitempty"`
	Provider harness.Provider `yaml:"provider" json:"provider"`
	Options  map[string]any   `yaml:"options,omitempty" json:"options,omitempty"`
	Scripted *ScriptedSpec    `yaml:"scripted,omitempty" json:"scripted,omitempty"`
}

// RoleAgents are the per-role agents of a configuration (nil: the entry's).
type RoleAgents struct {
	Planner   *AgentSpec `yaml:"planner,omitempty" json:"planner,omitempty"`
	Developer *AgentSpec `yaml:"developer,omitempty" json:"developer,omitempty"`
	QA        *AgentSpec `yaml:"qa,omitempty" json:"qa,omitempty"`
}

// Agent is the agent given for role, nil when the role runs the entry's.
func (r *RoleAgents) Agent(role runrecord.Role) *AgentSpec {
	if r == nil {
		return nil
	}
	switch role {
	case runrecord.RolePlanner:
		return r.Planner
	case runrecord.RoleDeveloper:
		return r.Developer
	case runrecord.RoleQA:
		return r.QA
	}
	return nil
}

// HasTeam reports whether some role has an agent of its own.
func (h HarnessModel) HasTeam() bool {
	for _, role := range runrecord.Roles {
		if h.Roles.Agent(role) != nil {
			return true
		}
	}
	return false
}

// ForRole is the configuration role runs: the entry's, with the role's own
// agent (CLI, version, provider, options, script) when roles: gives one.
// The label stays the entry's; Roles is dropped, so what a role runs is
// one agent.
func (h HarnessModel) ForRole(role runrecord.Role) HarnessModel {
	a := h.Roles.Agent(role)
	h.Roles = nil
	if a != nil {
		h.AgentSpec = *a
	}
	return h
}

// ScriptedSpec is the replay script of the scripted test-double provider.
type ScriptedSpec struct {
	Script string `yaml:"script" json:"script"`
	// written is Script as the config wrote it (Script is made absolute).
	written string
}

// AsWritten is the script's path as the config wrote it: what identifies
// the configuration wherever the checkout lies (trial keys, Canonical).
func (s *ScriptedSpec) AsWritten() string {
	if s.written != "" {
		return s.written
	}
	return s.Script
}

// IsScripted reports whether the configuration talks to the test double.
func (h HarnessModel) IsScripted() bool { return h.Provider.Name == ScriptedProvider }

// HarnessSpec is the catalogue spec this configuration builds.
func (h HarnessModel) HarnessSpec() harness.Spec {
	return harness.Spec{Kind: h.Harness, Binary: h.Binary, Version: h.Version, Provider: h.Provider, Options: h.Options}
}

// Timeouts per role and for silence.
type Timeouts struct {
	Planner   time.Duration `yaml:"planner" json:"planner"`
	Developer time.Duration `yaml:"developer" json:"developer"`
	QA        time.Duration `yaml:"qa" json:"qa"`
	Idle      time.Duration `yaml:"idle" json:"idle"`
	// FirstRequest bounds the time from an invocation's start to its
	// first model request (docs/no-model-turn.md: start-up is not silence).
	FirstRequest time.Duration `yaml:"first_request" json:"first_request,omitempty"`
}

// Retries: contract retries per role call, replacements of attempts lost to
// infrastructure failures, and the first back-off (doubled per attempt).
// DefaultRetries are the retries a config that leaves them out gets, an
// experiment's and a project's (hoh-project.yaml) alike; a written 0 means
// none.
var DefaultRetries = Retries{Contract: 2, Infrastructure: 3, Backoff: 30 * time.Second}

type Retries struct {
	Contract       int           `yaml:"contract" json:"contract"`
	Infrastructure int           `yaml:"infrastructure" json:"infrastructure"`
	Backoff        time.Duration `yaml:"backoff" json:"backoff"`
}

// Budget caps the tokens of the whole experiment (0 = unlimited).
type Budget struct {
	Tokens int64 `yaml:"tokens" json:"tokens"`
	// USD caps the dollars (an exact decimal, "" = unlimited), priced with
	// the config's prices from what hoh's relay saw served, as Tokens is.
	USD string `yaml:"usd" json:"usd,omitempty"`
}

// Containers are limits every agent container gets besides the task's own
// (CPUs, memory, storage).
type Containers struct {
	// PidsLimit caps the processes of an agent container, so a fork bomb
	// stops there and not at the host's limit; 0 = docker.DefaultPids.
	PidsLimit int64 `yaml:"pids_limit" json:"pids_limit,omitempty"`
}

// RoleLimits bound each role invocation on the host (sandbox.Limits), the
// processes it starts together; a zero field keeps its default. The wall
// bound is the role's timeout.
type RoleLimits struct {
	Processes int   `yaml:"processes" json:"processes,omitempty"`
	MemoryMB  int64 `yaml:"memory_mb" json:"memory_mb,omitempty"`
	TmpMB     int64 `yaml:"tmp_mb" json:"tmp_mb,omitempty"`
}

// Sandbox is l in the sandbox's terms.
func (l *RoleLimits) Sandbox() sandbox.Limits {
	if l == nil {
		return sandbox.Limits{}
	}
	return sandbox.Limits{Procs: l.Processes, Memory: l.MemoryMB << 20, Tmp: l.TmpMB << 20}
}

// Problem is one validation finding.
type Problem struct {
	File string
	Line int
	Msg  string
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
	}
	return fmt.Sprintf("%s: %s", p.File, p.Msg)
}

// Problems is every problem of a config; it is the error Load returns.
type Problems []Problem

func (ps Problems) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d problem(s) in the experiment config:", len(ps))
	for _, p := range ps {
		b.WriteString("\n  " + p.String())
	}
	return b.String()
}

// Load reads and validates the config at path. The error is Problems when
// the config is wrong.
func Load(path string) (*Experiment, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// LoadOffline reads and validates the config at path like Load, except that
// unset provider key variables are not a problem: for commands that reach
// no model (hoh rescore).
func LoadOffline(path string) (*Experiment, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parse(path, data, true)
}

var lineRE = regexp.MustCompile(`^line (\d+): (.*)$`)

// Parse validates data read from file.
func Parse(file string, data []byte) (*Experiment, error) { return parse(file, data, false) }

func parse(file string, data []byte, offline bool) (*Experiment, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, Problems{syntaxProblem(file, err)}
	}
	if len(root.Content) == 0 {
		return nil, Problems{{File: file, Line: 1, Msg: "empty config"}}
	}
	doc := root.Content[0]
	v := &validator{file: file, offline: offline}
	// A duplicate key stops yaml.v3's decoder, so every later key would look
	// missing: report the duplicates alone.
	if v.duplicates(doc); len(v.problems) > 0 {
		return nil, v.problems
	}
	exp := &Experiment{Repetitions: 1, Concurrency: 1, Retries: DefaultRetries}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(exp); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			for _, msg := range te.Errors {
				v.typeError(msg)
			}
		} else {
			v.add(0, "%s", err.Error())
		}
	}
	exp.File = file
	if abs, err := filepath.Abs(filepath.Dir(file)); err == nil {
		exp.dir = abs
	} else {
		v.add(0, "the config's folder: %v", err)
	}
	exp.Lines = map[string]int{}
	recordLines(doc, "", exp.Lines)
	v.checkPaths(exp)
	v.check(doc, exp)
	if len(v.problems) > 0 {
		return nil, v.problems
	}
	exp.absolute()
	exp.expandFactorial()
	return exp, nil
}

// writtenPaths are an experiment's paths as its file wrote them.
type writtenPaths struct {
	loaded    bool
	benchmark string
}

// absolute makes every path of e absolute, once: nothing later depends on
// the working directory, on where the checkout lies or on a CLI resolving a
// relative path from its own directory. A bare binary name is a file beside
// the config, like every other path in it.
func (e *Experiment) absolute() {
	e.written = writtenPaths{loaded: true, benchmark: e.Benchmark.Path}
	e.Output = e.Resolve(e.Output)
	e.Benchmark.Path = e.Resolve(e.Benchmark.Path)
	for i := range e.Configs {
		c := &e.Configs[i]
		e.absoluteAgent(&c.AgentSpec)
		if c.Roles != nil {
			roles := *c.Roles
			for _, a := range []**AgentSpec{&roles.Planner, &roles.Developer, &roles.QA} {
				if *a != nil {
					own := **a
					e.absoluteAgent(&own)
					*a = &own
				}
			}
			c.Roles = &roles
		}
	}
}

// absoluteAgent makes an agent's binary and script absolute, keeping the
// script as written for Canonical.
func (e *Experiment) absoluteAgent(a *AgentSpec) {
	a.Binary = e.Resolve(a.Binary)
	if a.Scripted != nil {
		s := *a.Scripted
		s.written, s.Script = s.Script, e.Resolve(s.Script)
		a.Scripted = &s
	}
}

// checkPaths reports every environment variable a path of e names that is
// not set, at the path's line: an unset variable would otherwise become an
// empty string and a path nobody wrote.
func (v *validator) checkPaths(e *Experiment) {
	check := func(key, p string) {
		if missing := unsetVars(p); len(missing) > 0 {
			v.add(e.Line(key), "%s %q: environment variable %s is not set", key, p, strings.Join(missing, ", "))
		}
	}
	check("output", e.Output)
	check("benchmark.path", e.Benchmark.Path)
	for name, o := range e.Benchmark.Options {
		if s, ok := o.(string); ok {
			check("benchmark.options."+name, s)
		}
	}
	for i, c := range e.Configs {
		agents := map[string]*AgentSpec{fmt.Sprintf("configs[%d]", i): &c.AgentSpec}
		for _, role := range runrecord.Roles {
			if a := c.Roles.Agent(role); a != nil {
				agents[fmt.Sprintf("configs[%d].roles.%s", i, role)] = a
			}
		}
		for _, key := range sortedAgentKeys(agents) {
			a := agents[key]
			check(key+".binary", a.Binary)
			if a.Scripted != nil {
				check(key+".scripted.script", a.Scripted.Script)
			}
		}
	}
}

func sortedAgentKeys(m map[string]*AgentSpec) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// unsetVars are the variables p names ($X or ${X}) that are not set.
func unsetVars(p string) []string {
	var missing []string
	os.Expand(p, func(name string) string {
		if _, ok := os.LookupEnv(name); !ok && !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
		return ""
	})
	return missing
}

// duplicates reports every key given twice in one mapping.
func (v *validator) duplicates(n *yaml.Node) {
	if n.Kind == yaml.MappingNode {
		first := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if prev, dup := first[k.Value]; dup {
				v.add(k.Line, "key %q is given twice (first at line %d)", k.Value, prev)
			} else {
				first[k.Value] = k.Line
			}
		}
	}
	for _, c := range n.Content {
		v.duplicates(c)
	}
}

func recordLines(n *yaml.Node, path string, out map[string]int) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := n.Content[i].Value
			if path != "" {
				p = path + "." + p
			}
			out[p] = n.Content[i].Line
			recordLines(n.Content[i+1], p, out)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			out[p] = c.Line
			recordLines(c, p, out)
		}
	}
}

func syntaxProblem(file string, err error) Problem {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := lineRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return Problem{File: file, Line: n, Msg: "malformed YAML: " + m[2]}
	}
	return Problem{File: file, Msg: "malformed YAML: " + msg}
}

type validator struct {
	file     string
	problems Problems
	// offline: provider key variables are not checked (LoadOffline).
	offline bool
}

func (v *validator) add(line int, format string, args ...any) {
	v.problems = append(v.problems, Problem{File: v.file, Line: line, Msg: fmt.Sprintf(format, args...)})
}

func (v *validator) typeError(msg string) {
	if m := lineRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		v.add(n, "%s", friendly(m[2]))
		return
	}
	v.add(0, "%s", friendly(msg))
}

// friendly rewrites yaml.v3's type messages into config terms.
func friendly(msg string) string {
	if strings.Contains(msg, "into time.Duration") {
		return strings.Replace(msg, "cannot unmarshal !!str", "bad duration", 1) + " (use e.g. 30s, 10m, 2h)"
	}
	if strings.HasPrefix(msg, "field ") && strings.Contains(msg, " not found in type ") {
		name, typ, _ := strings.Cut(strings.TrimPrefix(msg, "field "), " not found in type ")
		if near := runrecord.Nearest(name, knownKeys()[typ]); near != "" {
			return fmt.Sprintf("unknown key %q (did you mean %q?)", name, near)
		}
		return fmt.Sprintf("unknown key %q", name)
	}
	return msg
}

// knownKeys maps each struct type an experiment config decodes into, by
// the name yaml.v3's errors give it ("config.Experiment"), to its YAML keys.
var knownKeys = sync.OnceValue(func() map[string][]string {
	out := map[string][]string{}
	var walk func(t reflect.Type)
	// keys lists t's keys under owner, an inline field's among its
	// owner's (yaml.v3 names the owner in its error).
	var keys func(owner string, t reflect.Type)
	keys = func(owner string, t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			switch {
			case tag == "-" || !f.IsExported():
				continue
			case opts == "inline":
				keys(owner, f.Type)
				continue
			case tag == "":
				tag = strings.ToLower(f.Name)
			}
			out[owner] = append(out[owner], tag)
			walk(f.Type)
		}
	}
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map || t.Kind() == reflect.Array {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || out[t.String()] != nil {
			return
		}
		out[t.String()] = []string{}
		keys(t.String(), t)
	}
	walk(reflect.TypeFor[Experiment]())
	return out
})

// child returns the value node of key in mapping n, or nil.
func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func line(n *yaml.Node, fallback int) int {
	if n == nil {
		return fallback
	}
	return n.Line
}

// checkBenchmark checks the benchmark section against the kind's
// registration: the kind exists, its path, and its options (each problem at
// the line of its option).
func (v *validator) checkBenchmark(doc *yaml.Node, e *Experiment) {
	bn := child(doc, "benchmark")
	k, known := benchmarks.Lookup(e.Benchmark.Kind)
	switch {
	case !known:
		v.add(line(child(bn, "kind"), line(bn, doc.Line)), "%v", benchmarks.UnknownError(e.Benchmark.Kind))
		return
	case k.NeedsPath && e.Benchmark.Path == "":
		v.add(line(bn, doc.Line), "benchmark %s needs a path to its tasks", e.Benchmark.Kind)
	case e.Benchmark.Path != "" && unsetVars(e.Benchmark.Path) == nil:
		if _, err := os.Stat(e.Resolve(e.Benchmark.Path)); err != nil {
			v.add(line(child(bn, "path"), line(bn, doc.Line)), "benchmark path %s: %v", e.Benchmark.Path, errors.Unwrap(err))
		}
	}
	on := child(bn, "options")
	_, errs := k.ParseOptions(e.Benchmark.Options, e.Resolve)
	for _, oe := range errs {
		ln := line(on, line(bn, doc.Line))
		if on != nil && on.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(on.Content); i += 2 {
				if on.Content[i].Value == oe.Option {
					ln = on.Content[i].Line
				}
			}
		}
		v.add(ln, "%s", oe.Msg)
	}
}

// safeSegment is a label that is one safe path segment (never "." or "..").
var safeSegment = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// TimeoutDefaults are the limits a left-out timeouts key means (the trial
// package applies them; idle: none).
var TimeoutDefaults = map[string]string{"planner": "30m", "developer": "2h", "qa": "1h", "idle": "no idle limit", "first_request": "5m"}

// check validates the decoded config against its document, each problem
// at its line, in the order of the keys.
func (v *validator) check(doc *yaml.Node, e *Experiment) {
	if doc.Kind != yaml.MappingNode {
		v.add(doc.Line, "the config must be a mapping of keys (name, output, benchmark, ...)")
		return
	}
	if strings.TrimSpace(e.Name) == "" {
		v.add(line(child(doc, "name"), doc.Line), "name is missing")
	}
	if strings.TrimSpace(e.Output) == "" {
		v.add(line(child(doc, "output"), doc.Line), "output (the run directory) is missing")
	}
	v.checkBenchmark(doc, e)
	v.checkTasks(doc, e)
	v.checkConfigs(doc, e)
	v.checkFactorial(doc, e)
	v.checkConditions(doc, e)
	if e.Repetitions < 1 || e.Repetitions > MaxRepetitions {
		v.add(line(child(doc, "repetitions"), doc.Line), "repetitions must be between 1 and %d, got %d", MaxRepetitions, e.Repetitions)
	}
	if e.Concurrency < 1 || e.Concurrency > MaxConcurrency {
		v.add(line(child(doc, "concurrency"), doc.Line), "concurrency must be between 1 and %d, got %d", MaxConcurrency, e.Concurrency)
	}
	v.checkTimeouts(doc, e)
	rn := child(doc, "retries")
	if e.Retries.Contract < 0 || e.Retries.Infrastructure < 0 || e.Retries.Backoff < 0 {
		v.add(line(rn, doc.Line), "retries must not be negative")
	}
	if e.Budget.Tokens < 0 {
		v.add(line(child(doc, "budget"), doc.Line), "budget.tokens must not be negative (0 = unlimited)")
	}
	v.checkPrices(doc, e)
	if l := e.Limits; l != nil && (l.Processes < 0 || l.MemoryMB < 0 || l.TmpMB < 0) {
		v.add(line(child(doc, "limits"), doc.Line), "limits must not be negative (leave a key out for its default)")
	}
	if kn := child(child(doc, "containers"), "pids_limit"); kn != nil && e.Containers.PidsLimit < 1 {
		v.add(kn.Line, "containers.pids_limit must be positive, got %d (leave the key out for the default: %d)", e.Containers.PidsLimit, docker.DefaultPids)
	}
}

// checkTasks checks the task selection: at most one way of selecting, and
// a sample per family of a positive size.
func (v *validator) checkTasks(doc *yaml.Node, e *Experiment) {
	tn := child(doc, "tasks")
	n := 0
	for _, set := range []bool{len(e.Tasks.IDs) > 0, len(e.Tasks.Glob) > 0, e.Tasks.Sample != nil, e.Tasks.Named != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		v.add(line(tn, doc.Line), "tasks: give only one of ids, glob, sample, named")
	}
	if s := e.Tasks.Sample; s != nil {
		sn := child(tn, "sample")
		if s.Per != "family" {
			v.add(line(child(sn, "per"), line(sn, 0)), "tasks.sample.per must be \"family\", got %q", s.Per)
		}
		if s.K <= 0 {
			v.add(line(child(sn, "k"), line(sn, 0)), "tasks.sample.k must be positive")
		}
	}
}

// checkConditions checks that there are conditions, each one valid,
// within the step limit and listed once (each problem at its line).
func (v *validator) checkConditions(doc *yaml.Node, e *Experiment) {
	cn := child(doc, "conditions")
	if len(e.Conditions) == 0 {
		v.add(line(cn, doc.Line), "conditions is empty: name at least one (e.g. vanilla, hoh@3)")
	}
	seen := map[string]bool{}
	for i, c := range e.Conditions {
		ln := line(cn, doc.Line)
		if cn != nil && i < len(cn.Content) {
			ln = cn.Content[i].Line
		}
		if arm, err := conditions.ParseArm(c); err != nil {
			// ParseArm's messages may already name the condition.
			msg := strings.TrimPrefix(err.Error(), fmt.Sprintf("condition %q: ", c))
			v.add(ln, "condition %q: %s", c, msg)
		} else if arm.Checkpoint > MaxSteps {
			v.add(ln, "condition %q: at most %d steps per trial (each step is a full Planner/Developer/QA iteration)", c, MaxSteps)
		}
		if seen[c] {
			v.add(ln, "condition %q listed twice", c)
		}
		seen[c] = true
	}
}

// checkTimeouts checks that each timeout written is a real limit.
func (v *validator) checkTimeouts(doc *yaml.Node, e *Experiment) {
	tmn := child(doc, "timeouts")
	for _, key := range []string{"planner", "developer", "qa", "idle", "first_request"} {
		d := map[string]time.Duration{"planner": e.Timeouts.Planner, "developer": e.Timeouts.Developer, "qa": e.Timeouts.QA,
			"idle": e.Timeouts.Idle, "first_request": e.Timeouts.FirstRequest}[key]
		// Left out means the default; written, it must be a real limit.
		kn := child(tmn, key)
		if kn == nil {
			continue
		}
		if _, err := time.ParseDuration(kn.Value); err == nil && d <= 0 { // a bad duration is reported by the decoder
			v.add(kn.Line, "timeouts.%s must be positive, got %s (leave the key out for the default: %s)", key, d, TimeoutDefaults[key])
		}
	}
}

func (v *validator) checkConfigs(doc *yaml.Node, e *Experiment) {
	cn := child(doc, "configs")
	if len(e.Configs) == 0 && e.Factorial == nil {
		v.add(line(cn, doc.Line), "configs is empty: give at least one harness-model configuration or a factorial design")
	}
	labels := map[string]int{}
	for i, c := range e.Configs {
		var item *yaml.Node
		if cn != nil && i < len(cn.Content) {
			item = cn.Content[i]
		}
		at := func(key string) int { return line(child(item, key), line(item, line(cn, doc.Line))) }
		name := fmt.Sprintf("configs[%d]", i)
		if c.Label == "" {
			v.add(at("label"), "%s: label is missing", name)
		} else {
			name = fmt.Sprintf("config %q", c.Label)
			if prev, dup := labels[c.Label]; dup {
				v.add(at("label"), "duplicate label %q (first used at line %d)", c.Label, prev)
			} else {
				labels[c.Label] = at("label")
			}
			if !safeSegment.MatchString(c.Label) {
				v.add(at("label"), "%s: a label is used as a directory name: letters, digits, '.', '_' and '-' only, starting with a letter or digit", name)
			}
		}
		if c.Concurrency > MaxConcurrency {
			v.add(at("concurrency"), "%s: concurrency must be at most %d, got %d", name, MaxConcurrency, c.Concurrency)
		}
		fallback := line(item, line(cn, doc.Line))
		v.checkAgent(e, name, item, fallback, c)
		v.checkRoles(e, name, item, fallback, c)
		if c.Concurrency < 0 {
			v.add(at("concurrency"), "%s: concurrency must not be negative", name)
		}
	}
}

// checkAgent checks one agent of a configuration (the entry's own, or a
// role's: name says which; item is its node, fallback the line when a key
// is missing): its harness, the API its CLI speaks, its model, its key
// variable and its endpoint or script.
func (v *validator) checkAgent(e *Experiment, name string, item *yaml.Node, fallback int, c HarnessModel) {
	at := func(key string) int { return line(child(item, key), line(item, fallback)) }
	cli, known := catalogue.Lookup(c.Harness)
	if !known {
		v.add(at("harness"), "%s: %v", name, catalogue.UnknownKind(c.Harness))
	}
	pn := child(item, "provider")
	pat := func(key string) int { return line(child(pn, key), line(pn, at("provider"))) }
	if c.Provider.Model == "" {
		v.add(pat("model"), "%s: provider.model is missing", name)
	}
	switch {
	case !slices.Contains(harness.APIs, c.Provider.API):
		v.add(pat("api"), "%s: provider.api must be %s, got %q", name, strings.Join(harness.APIs, ", "), c.Provider.API)
	case known && !cli.Speaks(c.Provider.API):
		v.add(pat("api"), "%s: harness %s speaks only %s, not provider.api %q (the %s)", name, c.Harness, strings.Join(cli.APIs, ", "), c.Provider.API, cli.Display)
	}
	if c.Provider.KeyEnv == "" {
		v.add(pat("key_env"), "%s: provider.key_env (the variable holding the API key) is missing", name)
	}
	keyEnvOK := true
	if p := runrecord.EnvNameProblem(c.Provider.KeyEnv); p != "" {
		keyEnvOK = false
		v.add(pat("key_env"), "%s: provider.key_env %s", name, p)
	}
	if !c.IsScripted() {
		if c.Scripted != nil {
			v.add(at("scripted"), "%s: scripted: is only for provider name %q", name, ScriptedProvider)
		}
		if c.Provider.BaseURL == "" {
			v.add(pat("base_url"), "%s: provider.base_url is missing", name)
		}
		// Name the variable, never its value.
		if c.Provider.KeyEnv != "" && keyEnvOK && !v.offline && os.Getenv(c.Provider.KeyEnv) == "" {
			v.add(pat("key_env"), "%s: the provider key variable %s is not set in the environment", name, c.Provider.KeyEnv)
		}
		return
	}
	if c.Scripted == nil || c.Scripted.Script == "" {
		v.add(at("provider"), "%s: the scripted provider needs scripted: {script: FILE}", name)
	} else if unsetVars(c.Scripted.Script) == nil {
		sn := child(child(item, "scripted"), "script")
		if _, err := scripted.LoadScript(e.Resolve(c.Scripted.Script)); err != nil {
			v.add(line(sn, at("scripted")), "%s: scripted script: %v", name, err)
		}
	}
}

// checkRoles checks a configuration's per-role agents (roles:), each as an
// entry's agent is checked, the messages naming the role.
func (v *validator) checkRoles(e *Experiment, name string, item *yaml.Node, fallback int, c HarnessModel) {
	if c.Roles == nil {
		return
	}
	rn := child(item, "roles")
	if !c.HasTeam() {
		v.add(line(rn, fallback), "%s", strings.TrimPrefix(name+": roles: gives no role an agent (give planner, developer or qa, or leave roles: out)", ": "))
		return
	}
	for _, role := range runrecord.Roles {
		if c.Roles.Agent(role) == nil {
			continue
		}
		an := child(rn, string(role))
		// name is empty for a roles file of its own (LoadRoles).
		who := strings.TrimSpace(fmt.Sprintf("%s role %s", name, role))
		v.checkAgent(e, who, an, line(an, line(rn, fallback)), c.ForRole(role))
	}
}

// Resolve expands the environment variables of a path of the config and
// makes it absolute against the config file's folder.
func (e *Experiment) Resolve(p string) string {
	p = os.ExpandEnv(p)
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	dir := e.dir
	if dir == "" { // an Experiment built in code, not loaded
		dir, _ = filepath.Abs(filepath.Dir(e.File))
	}
	return filepath.Join(dir, p)
}

// NoEvaluatorNotice marks a GameCraft-Bench run asked for without its
// evaluator (godot_bin: none) in its records and reports.
const NoEvaluatorNotice = "GameCraft-Bench without its evaluator (godot_bin: none): no game is built and every checkpoint scores 0: a plumbing check, not results"

// NoEvaluator reports whether the config asks for a GameCraft-Bench
// plumbing run without Godot (benchmark option godot_bin: none).
func (e *Experiment) NoEvaluator() bool {
	return e.Benchmark.Kind == "gamecraft" && e.Benchmark.Options["godot_bin"] == "none"
}

// Notices are what every record and report of a run of e must say about
// its scores: the scripted test double, a benchmark without its evaluator.
func (e *Experiment) Notices() []string {
	var out []string
	if e.Scripted() {
		out = append(out, ScriptedNotice)
	}
	if e.NoEvaluator() {
		out = append(out, NoEvaluatorNotice)
	}
	return out
}

// Notice is Notices as one line ("" when there is none).
func (e *Experiment) Notice() string { return strings.Join(e.Notices(), "; ") }

// Scripted reports whether any configuration uses the scripted test double.
func (e *Experiment) Scripted() bool {
	for _, c := range e.Configs {
		if c.IsScripted() {
			return true
		}
		for _, role := range runrecord.Roles {
			if c.HasTeam() && c.ForRole(role).IsScripted() {
				return true
			}
		}
	}
	return false
}

// Config returns the configuration with label.
func (e *Experiment) Config(label string) (HarnessModel, bool) {
	for _, c := range e.Configs {
		if c.Label == label {
			return c, true
		}
	}
	return HarnessModel{}, false
}

// Arms are the configured conditions, parsed: the one reader of their text
// (Load has reported each bad one at its line).
func (e *Experiment) Arms() ([]runrecord.Arm, error) {
	arms := make([]runrecord.Arm, len(e.Conditions))
	for i, c := range e.Conditions {
		a, err := conditions.ParseArm(c)
		if err != nil {
			return nil, fmt.Errorf("%s: condition %q: %w", e.File, c, err)
		}
		arms[i] = a
	}
	return arms, nil
}

// Canonical is the JSON of everything that decides what the trials are and
// how they run: not output, concurrency, budget, binary paths, nor the host
// and port of an endpoint (a provider that moved is the same provider).
func (e *Experiment) Canonical() []byte {
	c := *e
	c.Output, c.Concurrency, c.Budget, c.Export = "", 0, Budget{}, nil
	if e.written.loaded {
		c.Benchmark.Path = e.written.benchmark
	}
	// The conditions are pinned per trial by the plan's keys and the lock's
	// arms, where raising T is an extension rather than a different config.
	c.Conditions = nil
	c.Configs = nil
	c.Factorial = e.Factorial.canonical()
	for _, h := range e.Configs {
		h.Concurrency, h.Binary = 0, ""
		h.Roles = canonicalRoles(h.Roles)
		if h.Scripted != nil {
			h.Scripted = &ScriptedSpec{Script: h.Scripted.AsWritten()}
		}
		h.Provider.BaseURL = EndpointIdentity(h)
		c.Configs = append(c.Configs, h)
	}
	data, _ := json.Marshal(c)
	return data
}

// EndpointIdentity is the part of a configuration's base URL that names the
// API rather than where it is served: scheme and path, without host and
// port; empty for the scripted provider (its address is chosen at run time).
func EndpointIdentity(h HarnessModel) string {
	if h.IsScripted() || h.Provider.BaseURL == "" {
		return ""
	}
	u, err := url.Parse(h.Provider.BaseURL)
	if err != nil || u.Host == "" {
		return h.Provider.BaseURL
	}
	return u.Scheme + "://*" + u.Path
}

// Digest is a content digest of Canonical.
func (e *Experiment) Digest() string {
	sum := sha256.Sum256(e.Canonical())
	return "sha256:" + hex.EncodeToString(sum[:])
}
