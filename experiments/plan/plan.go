// Package plan turns an experiment config into its trials: configurations x
// conditions x tasks x repetitions, each with a stable content-derived key
// and a readable directory, plus the lock that pins what a run directory was
// started with, so a resume with a different config is caught.
package plan

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/benchmark/kind"
	"github.com/hoh-research/hoh/adapters/benchmark/registry"
	"github.com/hoh-research/hoh/adapters/benchmark/selector"
	"github.com/hoh-research/hoh/adapters/harness/cliinstall"
	"github.com/hoh-research/hoh/adapters/sandbox/docker"
	"github.com/hoh-research/hoh/experiments/conditions"
	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/history"
	"github.com/hoh-research/hoh/runrecord"
)

// Trial is one planned trial.
type Trial struct {
	Key    string        `json:"key"`
	Dir    string        `json:"dir"` // relative to the run directory
	Config string        `json:"config"`
	Arm    runrecord.Arm `json:"arm"`
	// Arms are the configured arms this trial serves (runrecord.ServedArms).
	Arms       []runrecord.Arm `json:"arms,omitempty"`
	Task       benchmark.Task  `json:"task"`
	TaskDigest string          `json:"task_digest"`
	Rep        int             `json:"rep"`
}

// Spec is the runrecord.TrialSpec of a planned trial.
func (t Trial) Spec() runrecord.TrialSpec {
	return runrecord.TrialSpec{Key: t.Key, Benchmark: t.Task.Benchmark, Task: t.Task.ID, Config: t.Config, Arm: t.Arm, Rep: t.Rep}
}

// Plan is every trial of an experiment, in a stable order.
type Plan struct {
	Experiment *config.Experiment
	Bench      benchmark.Benchmark
	Tasks      []benchmark.Task
	Trials     []Trial
	Lock       runrecord.Lock
	// Resumed is the lock the output directory already holds, nil for a
	// new run: a resumed shard keeps the trials its lock dealt it.
	Resumed *runrecord.Lock
}

// OpenBenchmark opens the benchmark the config names through the benchmark
// registry. c is the run's Docker client, given to kinds whose agents work
// in containers; nil when only planning.
func OpenBenchmark(e *config.Experiment, c *docker.Client) (benchmark.Benchmark, error) {
	b, err := registry.Open(registry.Spec{Kind: e.Benchmark.Kind, Path: e.Resolve(e.Benchmark.Path),
		Options: e.Benchmark.Options, Resolve: e.Resolve}, c)
	var one *kind.OptionError
	var all kind.OptionErrors
	switch {
	case err == nil:
		return b, nil
	case errors.As(err, &one), errors.As(err, &all):
		return nil, fmt.Errorf("%s: %w", e.File, err)
	}
	return nil, fmt.Errorf("%s: benchmark: %w", e.File, err)
}

// SelectTasks applies the config's task selection.
func SelectTasks(e *config.Experiment, all []benchmark.Task) ([]benchmark.Task, error) {
	s := e.Tasks
	switch {
	case len(s.IDs) > 0:
		if ps := unknownIDs(e, all); len(ps) > 0 {
			return nil, ps
		}
		return selector.ByIDs(all, s.IDs)
	case len(s.Glob) > 0:
		return selector.ByGlob(all, s.Glob)
	case s.Sample != nil:
		return selector.Stratified(all, s.Sample.K, selector.ByFamily, s.Sample.Seed)
	case s.Named != "":
		ids, ok := selector.Named(s.Named)
		if !ok {
			return nil, fmt.Errorf("%s: unknown named task selection %q (known: %s)", e.File, s.Named, strings.Join(selector.Names(), ", "))
		}
		return selector.ByIDs(all, ids)
	}
	return all, nil
}

// unknownIDs names every selected task id the benchmark lacks, at its line.
func unknownIDs(e *config.Experiment, all []benchmark.Task) config.Problems {
	have := make(map[string]bool, len(all))
	ids := make([]string, 0, len(all))
	for _, t := range all {
		have[t.ID] = true
		ids = append(ids, t.ID)
	}
	var ps config.Problems
	for i, id := range e.Tasks.IDs {
		if !have[id] {
			mean := ""
			if near := runrecord.Nearest(id, ids); near != "" {
				mean = fmt.Sprintf(" (did you mean %q?)", near)
			}
			ps = append(ps, e.Problem(fmt.Sprintf("tasks.ids[%d]", i), "task %q is not in benchmark %s%s (%d tasks; hoh tasks list %s PATH lists them)", id, e.Benchmark.Kind, mean, len(all), e.Benchmark.Kind))
		}
	}
	return ps
}

// Build opens the benchmark without Docker and lays out the trials (hoh run
// --check, status); a run opens it with its client (OpenBenchmark, BuildWith).
func Build(ctx context.Context, e *config.Experiment) (*Plan, error) {
	b, err := OpenBenchmark(e, nil)
	if err != nil {
		return nil, err
	}
	return BuildWith(ctx, e, b)
}

// BuildWith lays out the trials over an already opened benchmark.
func BuildWith(ctx context.Context, e *config.Experiment, b benchmark.Benchmark) (*Plan, error) {
	all, err := b.Tasks(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: benchmark tasks: %w", e.File, err)
	}
	tasks, err := SelectTasks(e, all)
	if ps, ok := err.(config.Problems); ok {
		return nil, ps
	}
	if err != nil {
		return nil, fmt.Errorf("%s: tasks: %w", e.File, err)
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("%s: the task selection is empty", e.File)
	}
	p := &Plan{Experiment: e, Bench: b, Tasks: tasks}
	digests := map[string]string{}
	for _, t := range tasks {
		d, err := TaskDigest(t)
		if err != nil {
			return nil, fmt.Errorf("task %s: %w", t.ID, err)
		}
		digests[t.ID] = d
	}
	configured, err := e.Arms()
	if err != nil {
		return nil, err
	}
	series, err := seriesOf(configured)
	if err != nil {
		return nil, err
	}
	served := map[string][]runrecord.Arm{} // series -> the configured arms it serves
	for _, a := range configured {
		c, err := conditions.Of(a)
		if err != nil {
			return nil, err
		}
		served[c.Series()] = append(served[c.Series()], a)
	}
	for _, arms := range served {
		sort.SliceStable(arms, func(i, j int) bool { return arms[i].Checkpoint < arms[j].Checkpoint })
	}
	for _, c := range e.Configs {
		hs, _ := json.Marshal(harnessIdentity(c))
		for _, s := range series {
			// Key and directory name the series, not its step count: raising
			// T (or adding vanilla-continuation@k to vanilla) extends the
			// same trials instead of starting new ones.
			for _, t := range tasks {
				for _, u := range trialsOf(b, t, s.name, s.arm, served[s.name]) {
					for rep := 1; rep <= e.Repetitions; rep++ {
						p.Trials = append(p.Trials, Trial{
							Key:    Key(c.Label, string(hs), u.name, t.ID, digests[t.ID], rep),
							Dir:    filepath.Join(c.Label, u.name, t.ID, fmt.Sprintf("rep-%d", rep)),
							Config: c.Label, Arm: u.arm, Arms: u.arms, Task: t, TaskDigest: digests[t.ID], Rep: rep,
						})
					}
				}
			}
		}
	}
	p.Lock, err = newLock(e, p)
	if e.Output != "" {
		// An unreadable lock deals afresh here; the run's resume check
		// reports it.
		if old, err := runrecord.ReadLock(e.Output); err == nil {
			p.Resumed = &old
		}
	}
	return p, err
}

// armTrial is what one trial of a task serves: its directory name, the arm
// it runs and the configured arms it reports.
type armTrial struct {
	name string
	arm  runrecord.Arm
	arms []runrecord.Arm
}

// trialsOf lays out a series' trials of task t: one for the series (its
// checkpoints serve every arm), except for a multi-step task, whose later
// steps start from the earlier ones' last checkpoint, so that checkpoint t
// of a longer trial is not what arm @t runs: one trial per arm, each
// named by its arm.
func trialsOf(b benchmark.Benchmark, t benchmark.Task, series string, arm runrecord.Arm, served []runrecord.Arm) []armTrial {
	if !benchmark.MultiStep(b, t) {
		return []armTrial{{name: series, arm: arm, arms: served}}
	}
	out := make([]armTrial, len(served))
	for i, a := range served {
		out[i] = armTrial{name: a.String(), arm: a, arms: []runrecord.Arm{a}}
	}
	return out
}

// seriesOf groups the configured arms into series (conditions.Series), in
// first-mention order, each run for the most steps any of its arms asks
// for: hoh@2 and hoh@3 are checkpoints 2 and 3 of one hoh@3 trial, and
// vanilla with vanilla-continuation@3 is one Vanilla pass continued twice.
func seriesOf(arms []runrecord.Arm) ([]seriesArm, error) {
	steps := map[string]int{}
	var order []string
	for _, a := range arms {
		c, err := conditions.Of(a)
		if err != nil {
			return nil, err
		}
		s := c.Series()
		if _, ok := steps[s]; !ok {
			order = append(order, s)
		}
		steps[s] = max(steps[s], a.Checkpoint)
	}
	out := make([]seriesArm, 0, len(order))
	for _, s := range order {
		a, err := conditions.SeriesArm(s, steps[s])
		if err != nil {
			return nil, err
		}
		out = append(out, seriesArm{name: s, arm: a})
	}
	return out, nil
}

// seriesArm is a series by name and the arm that runs it.
type seriesArm struct {
	name string
	arm  runrecord.Arm
}

// harnessIdentity is what of a configuration decides its behaviour: not the
// binary's path (it differs between machines) nor limits.
func harnessIdentity(c config.HarnessModel) any {
	prov := c.Provider
	prov.BaseURL = config.EndpointIdentity(c)
	return struct {
		Kind, Version string
		Provider      any
		Options       map[string]any
		Script        string
	}{c.Harness, c.Version, prov, c.Options, scriptOf(c)}
}

func scriptOf(c config.HarnessModel) string {
	if c.Scripted == nil {
		return ""
	}
	return c.Scripted.AsWritten() // as written: the key does not depend on where the checkout lies
}

// Key is the short content-derived key of a trial.
func Key(label, harnessSpec, arm, task, taskDigest string, rep int) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%s\x00%d", label, harnessSpec, arm, task, taskDigest, rep)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// TaskDigest covers the task's public and evaluator-side content: its
// metadata, specification and, when it has one, its folder on disk.
func TaskDigest(t benchmark.Task) (string, error) {
	h := sha256.New()
	meta := t
	meta.Dir = ""
	data, _ := json.Marshal(meta)
	h.Write(data)
	h.Write([]byte{0})
	h.Write([]byte(t.Spec))
	if t.Dir != "" {
		d, err := history.Digest(t.Dir)
		if err != nil {
			return "", err
		}
		h.Write([]byte(d))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))[:32], nil
}

// Shard is the k-th of N slices of the plan (1 <= K <= N), dealt by cost
// (Deal, Plan.Select); zero = all.
type Shard struct{ K, N int }

// ParseShard reads "k/N".
func ParseShard(s string) (Shard, error) {
	var sh Shard
	if s == "" {
		return sh, nil
	}
	if _, err := fmt.Sscanf(s, "%d/%d", &sh.K, &sh.N); err != nil || sh.N < 1 || sh.K < 1 || sh.K > sh.N {
		return Shard{}, fmt.Errorf("bad shard %q: want k/N with 1 <= k <= N", s)
	}
	return sh, nil
}

func (s Shard) String() string {
	if s.N == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.K, s.N)
}

func newLock(e *config.Experiment, p *Plan) (runrecord.Lock, error) {
	l := runrecord.Lock{Experiment: e.Name, ConfigDigest: e.Digest(), Config: e.Canonical(), TaskDigests: map[string]string{},
		Harnesses: map[string]string{}, HohVersion: HohVersion(), Endpoints: map[string]string{}}
	for _, t := range p.Trials {
		l.TaskDigests[t.Task.ID] = t.TaskDigest
		l.Keys = append(l.Keys, t.Key)
		if l.Arms == nil {
			l.Arms = map[string]runrecord.Arm{}
		}
		l.Arms[path.Dir(path.Dir(filepath.ToSlash(t.Dir)))] = t.Arm
	}
	for _, entry := range e.Configs {
		// A role team's own agents are locked under "label.role" beside
		// the entry's, so a resume finds each role's CLI and script again.
		agents := map[string]config.HarnessModel{entry.Label: entry}
		for _, role := range runrecord.Roles {
			if entry.Roles.Agent(role) != nil {
				agents[runrecord.RoleLockKey(entry.Label, role)] = entry.ForRole(role)
			}
		}
		for key, c := range agents {
			if !c.IsScripted() {
				l.Endpoints[key] = c.Provider.BaseURL
			}
			l.Harnesses[key] = c.Harness + "@" + c.Version
			if c.IsScripted() && c.Scripted != nil {
				data, err := os.ReadFile(e.Resolve(c.Scripted.Script))
				if err != nil {
					return l, err
				}
				sum := sha256.Sum256(data)
				if l.Scripts == nil {
					l.Scripts = map[string]string{}
				}
				l.Scripts[key] = "sha256:" + hex.EncodeToString(sum[:])
			}
		}
	}
	l.Notice = e.Notice()
	return l, nil
}

// HohVersion is the module version and VCS revision of this binary. A
// binary built without VCS stamping (go run, go test, GOFLAGS=-buildvcs=false)
// takes the revision from the git checkout it runs in, when that checkout is
// this module; "(devel)" alone says nothing about which code ran.
func HohVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		rev, dirty = checkoutRevision(bi.Main.Path)
		if rev == "" {
			return v
		}
		v += "+checkout"
	}
	v += "+" + rev
	if dirty && !strings.HasSuffix(v, "+dirty") {
		v += "+dirty"
	}
	return v
}

// checkoutRevision is the git revision of the checkout of module around the
// working directory, "" when there is none.
func checkoutRevision(module string) (rev string, dirty bool) {
	root, err := cliinstall.RepoRoot()
	if err != nil {
		return "", false
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !strings.HasPrefix(string(mod), "module "+module+"\n") {
		return "", false
	}
	out, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		return "", false
	}
	status, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output()
	return strings.TrimSpace(string(out)), err == nil && len(bytes.TrimSpace(status)) > 0
}

// Diff lists what differs between an existing lock and a new one; the hoh
// version alone is not a difference that blocks a resume.
func Diff(old, cur runrecord.Lock) []string {
	var out []string
	if old.ConfigDigest != cur.ConfigDigest {
		changes := configChanges(old.Config, cur.Config)
		if len(changes) == 0 { // a lock written before locks kept the config
			changes = []string{fmt.Sprintf("config digest %s -> %s", old.ConfigDigest, cur.ConfigDigest)}
		}
		out = append(out, changes...)
	}
	diffMap := func(what string, a, b map[string]string) {
		keys := map[string]bool{}
		for k := range a {
			keys[k] = true
		}
		for k := range b {
			keys[k] = true
		}
		var sorted []string
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			switch av, bv := a[k], b[k]; {
			case av == bv:
			case av == "":
				out = append(out, fmt.Sprintf("%s %s added (%s)", what, k, bv))
			case bv == "":
				out = append(out, fmt.Sprintf("%s %s removed", what, k))
			default:
				out = append(out, fmt.Sprintf("%s %s changed: %s -> %s", what, k, av, bv))
			}
		}
	}
	diffMap("task", old.TaskDigests, cur.TaskDigests)
	diffMap("harness", old.Harnesses, cur.Harnesses)
	diffMap("provider script", old.Scripts, cur.Scripts)
	if old.Arms != nil {
		// A series added or removed changes the plan; a changed step count
		// is an extension (ArmChanges), not a difference.
		added, removed := map[string]string{}, map[string]string{}
		for k, v := range cur.Arms {
			if _, ok := old.Arms[k]; !ok {
				added[k] = v.String()
			}
		}
		for k, v := range old.Arms {
			if _, ok := cur.Arms[k]; !ok {
				removed[k] = v.String()
			}
		}
		diffMap("condition series", removed, added)
	}
	if strings.Join(old.Keys, ",") != strings.Join(cur.Keys, ",") {
		gone, added := setDiff(old.Keys, cur.Keys), setDiff(cur.Keys, old.Keys)
		switch {
		case gone == 0 && added == 0:
			out = append(out, fmt.Sprintf("plan: the same %d trials in another order", len(cur.Keys)))
		default:
			out = append(out, fmt.Sprintf("plan: %d trial(s) no longer planned, %d new (%d -> %d)", gone, added, len(old.Keys), len(cur.Keys)))
		}
	}
	if old.Shard != cur.Shard {
		out = append(out, fmt.Sprintf("shard %q -> %q", old.Shard, cur.Shard))
	}
	return out
}

// EndpointChanges lists configurations whose endpoint moved (host or port):
// allowed on resume, and said.
func EndpointChanges(old, cur runrecord.Lock) []string {
	var out []string
	for label, u := range cur.Endpoints {
		if prev, ok := old.Endpoints[label]; ok && prev != u {
			out = append(out, fmt.Sprintf("config %s: endpoint %s -> %s", label, prev, u))
		}
	}
	sort.Strings(out)
	return out
}

func setDiff(a, b []string) int {
	in := make(map[string]bool, len(b))
	for _, k := range b {
		in[k] = true
	}
	n := 0
	for _, k := range a {
		if !in[k] {
			n++
		}
	}
	return n
}

// configChanges lists the differing leaves of two canonical configs as
// "path: old -> new".
func configChanges(a, b json.RawMessage) []string {
	if len(a) == 0 || len(b) == 0 {
		return nil
	}
	var av, bv any
	if json.Unmarshal(a, &av) != nil || json.Unmarshal(b, &bv) != nil {
		return nil
	}
	fa, fb := map[string]string{}, map[string]string{}
	flatten("", av, fa)
	flatten("", bv, fb)
	keys := map[string]bool{}
	for k := range fa {
		keys[k] = true
	}
	for k := range fb {
		keys[k] = true
	}
	var out []string
	for k := range keys {
		x, okx := fa[k]
		y, oky := fb[k]
		if isDurationPath(k) {
			x, y = durationText(x), durationText(y)
		}
		switch {
		case !okx:
			out = append(out, fmt.Sprintf("%s: added %s", k, y))
		case !oky:
			out = append(out, fmt.Sprintf("%s: removed (was %s)", k, x))
		case x != y:
			out = append(out, fmt.Sprintf("%s: %s -> %s", k, x, y))
		}
	}
	sort.Strings(out)
	return out
}

var indexRE = regexp.MustCompile(`\[\d+\]`)

// isDurationPath reports whether a canonical-config leaf ("timeouts.qa",
// "retries.backoff") is a time.Duration, which JSON holds in nanoseconds.
func isDurationPath(p string) bool { return durationPaths()[indexRE.ReplaceAllString(p, "[]")] }

var durationPaths = sync.OnceValue(func() map[string]bool {
	out := map[string]bool{}
	durType := reflect.TypeFor[time.Duration]()
	var walk func(path string, t reflect.Type, depth int)
	walk = func(path string, t reflect.Type, depth int) {
		switch {
		case t == durType:
			out[path] = true
		case depth > 8:
		case t.Kind() == reflect.Pointer:
			walk(path, t.Elem(), depth+1)
		case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
			walk(path+"[]", t.Elem(), depth+1)
		case t.Kind() == reflect.Struct:
			for i := range t.NumField() {
				f := t.Field(i)
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				if name == "-" || !f.IsExported() {
					continue
				}
				if name == "" {
					name = f.Name
				}
				if path != "" {
					name = path + "." + name
				}
				walk(name, f.Type, depth+1)
			}
		}
	}
	walk("", reflect.TypeFor[config.Experiment](), 0)
	return out
})

// durationText renders a JSON nanosecond count as a duration ("10m0s").
func durationText(v string) string {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return v
	}
	return time.Duration(n).String()
}

func flatten(path string, v any, out map[string]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, c := range v {
			p := k
			if path != "" {
				p = path + "." + k
			}
			flatten(p, c, out)
		}
	case []any:
		for i, c := range v {
			flatten(fmt.Sprintf("%s[%d]", path, i), c, out)
		}
	default:
		b, _ := json.Marshal(v)
		out[path] = string(b)
	}
}

// ArmChanges compares the arms two locks ran per configuration and series:
// a raised step count extends finished trials (allowed), a lowered one would
// discard checkpoints (refused, whatever --allow-changed-config says).
func ArmChanges(old, cur runrecord.Lock) (raised, lowered []string) {
	var names []string
	for k := range cur.Arms {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		a, ok := old.Arms[k]
		b := cur.Arms[k]
		if !ok || a.Checkpoint == b.Checkpoint {
			continue
		}
		msg := fmt.Sprintf("%s: %s -> %s", k, a, b)
		if b.Checkpoint > a.Checkpoint {
			raised = append(raised, msg)
		} else {
			lowered = append(lowered, msg)
		}
	}
	return raised, lowered
}

// ReadLock reads a run directory's lock.
func ReadLock(out string) (runrecord.Lock, error) { return runrecord.ReadLock(out) }
