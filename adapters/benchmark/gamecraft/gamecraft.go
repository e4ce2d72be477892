// Package gamecraft adapts GameCraft-Bench (Harbor tasks that ask for a
// Godot 4 game) to hoh: it loads a checkout, gives each task's public
// instruction as its Spec, runs the public Godot build check, and scores the
// verifier's breakdown.json with the task's own rubric formula. The rubric
// (tests/) is evaluator-only and is never returned in a Spec, a workspace or a
// CheckResult.
//
// Weights found in the real checkout (commit 9c0b92f, 140 tasks): 135 score
// formulas weight the category means M, D, V, A by the paper's
// 0.15/0.35/0.15/0.35 (two of them written as 3/20 and 7/20), and five
// visual-novel tasks (arcaneacademy, grimfable, keepsake, lastsignal,
// pactbound) use 0.20/0.30/0.15/0.35. visualnovel-arcaneacademy is in the
// paper's 45-task sample. One formula (openworld-fishing) writes category
// means without the outer parentheses; all are linear in the means.
package gamecraft

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark"
)

// Name is the benchmark name used in Task.Benchmark and records.
const Name = "gamecraft"

// Groups maps each of the 15 families to the paper's reporting group
// (appendix B.4.1, Table 10).
var Groups = map[string]string{
	"platformer": "Action", "shooter": "Action", "roguelike": "Action",
	"racing": "Timing", "rhythm": "Timing", "sports": "Timing",
	"strategy": "Strategy", "cardgame": "Strategy", "puzzle": "Strategy",
	"tycoon": "Simulation", "idle": "Simulation", "simulation": "Simulation",
	"horror": "Adventure", "openworld": "Adventure", "visualnovel": "Adventure",
}

// Family is the slug prefix before the first "-".
func Family(slug string) string {
	f, _, _ := strings.Cut(slug, "-")
	return f
}

// Weights are a formula's weights on the category means M, D, V, A.
type Weights struct{ M, D, V, A float64 }

// paperWeights are the weights the paper states for GameCraft-Bench.
var paperWeights = Weights{M: 0.15, D: 0.35, V: 0.15, A: 0.35}

// Equal compares weights up to floating-point rounding.
func (w Weights) Equal(o Weights) bool {
	const eps = 1e-9
	return math.Abs(w.M-o.M) < eps && math.Abs(w.D-o.D) < eps &&
		math.Abs(w.V-o.V) < eps && math.Abs(w.A-o.A) < eps
}

func (w Weights) String() string {
	return fmt.Sprintf("M=%.4g D=%.4g V=%.4g A=%.4g", w.M, w.D, w.V, w.A)
}

// TaskData is everything loaded for one task, including evaluator-only parts.
type TaskData struct {
	Task    benchmark.Task
	File    *TaskFile
	Rubric  *Rubric // evaluator-only
	Formula *Formula
	Weights Weights
}

// Options configure the adapter.
type Options struct {
	// GodotBin is the Godot 4 binary for the public build check; empty means
	// "godot" looked up in PATH.
	GodotBin string
	// BuildTimeout bounds the build check (default 60 s, the verifier's gate).
	BuildTimeout time.Duration
	// VerifierOutput returns the folder holding the verifier's breakdown.json
	// for a trial. It must lie outside the agent's workspace, so that an
	// agent cannot plant its own score. Nil: no verifier output is available.
	VerifierOutput func(t benchmark.Task, artifactDir string) string
	// Verifier, when set, runs each task's tests/test.sh per checkpoint.
	Verifier *Verifier
	// AgentEnvironment is where agents run: EnvHost (default; AgentMounts)
	// or EnvDocker (the benchmark is then a DockerBenchmark).
	AgentEnvironment string
}

// Benchmark is a loaded GameCraft-Bench checkout.
type Benchmark struct {
	Root string
	Opts Options
	// Skipped are folders under tasks/ that are not tasks (upstream's
	// tasks/example template): their slug prefix is no family.
	Skipped []Skipped
	// Excluded are the tasks that failed to load, each error naming its file;
	// the other tasks still run.
	Excluded []error
	tasks    []*TaskData
	byID     map[string]*TaskData
}

// Skipped is one folder under tasks/ that is not a task, and why.
type Skipped struct{ Dir, Reason string }

var _ benchmark.Benchmark = (*Benchmark)(nil)

// Load reads every task of the checkout at root. Folders that are not tasks
// are skipped and malformed tasks excluded (both listed by LoadNotes), so one
// bad task never stops the rest; it is an error, naming every file, only
// when no task loads.
func Load(root string) (*Benchmark, error) {
	b, errs := scan(root)
	if b == nil {
		return nil, errors.Join(errs...)
	}
	if len(b.tasks) == 0 {
		if len(errs) == 0 {
			errs = []error{fmt.Errorf("gamecraft: %s holds no tasks", filepath.Join(root, "tasks"))}
		}
		return nil, errors.Join(errs...)
	}
	b.Excluded = errs
	return b, nil
}

// LoadNotes implements benchmark.LoadNotes.
func (b *Benchmark) LoadNotes() []string {
	var notes []string
	for _, s := range b.Skipped {
		notes = append(notes, fmt.Sprintf("skipped %s: %s", s.Dir, s.Reason))
	}
	for _, err := range b.Excluded {
		notes = append(notes, "excluded a malformed task: "+err.Error())
	}
	return notes
}

// scan reads the checkout like Load, keeping the tasks that load, and
// returns every malformed task's error (for conformance reports); folders
// that are not tasks go to Skipped. A nil Benchmark means the root itself is
// unusable.
func scan(root string) (*Benchmark, []error) {
	dirs, err := taskDirs(root)
	if err != nil {
		return nil, []error{err}
	}
	b := &Benchmark{Root: root, byID: map[string]*TaskData{}}
	var errs []error
	for _, dir := range dirs {
		if family := Family(filepath.Base(dir)); Groups[family] == "" {
			b.Skipped = append(b.Skipped, Skipped{Dir: dir, Reason: fmt.Sprintf(
				"not a task: family %q (slug prefix) is not one of the 15 GameCraft-Bench families", family)})
			continue
		}
		td, err := loadTask(dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		b.tasks = append(b.tasks, td)
		b.byID[td.Task.ID] = td
	}
	return b, errs
}

func loadTask(dir string) (*TaskData, error) {
	slug := filepath.Base(dir)
	family := Family(slug)
	group, ok := Groups[family]
	if !ok {
		return nil, fileErr(dir, 0, "family %q (slug prefix) is not one of the 15 GameCraft-Bench families", family)
	}
	tf, err := decodeTaskFile(filepath.Join(dir, "task.toml"))
	if err != nil {
		return nil, err
	}
	spec, title, err := readInstruction(filepath.Join(dir, "instruction.md"))
	if err != nil {
		return nil, err
	}
	rubricPath := filepath.Join(dir, "tests", "rubric.json")
	rubric, formula, err := decodeRubric(rubricPath)
	if err != nil {
		return nil, err
	}
	w, err := categoryWeights(formula, rubric)
	if err != nil {
		return nil, fileErr(rubricPath, 0, "%v", err)
	}
	name := title
	if name == "" {
		name = tf.Task.Name
	}
	env := tf.Environment
	allowInternet := env.AllowInternet == nil || *env.AllowInternet
	t := benchmark.Task{
		Benchmark: Name,
		ID:        slug,
		Name:      name,
		Family:    family,
		Group:     group,
		Spec:      spec,
		Dir:       dir,
		Limits: benchmark.Limits{
			CPUs:            float64(valueOrZero(env.CPUs)),
			MemoryMB:        int64(valueOrZero(env.MemoryMB)),
			StorageMB:       int64(valueOrZero(env.StorageMB)),
			GPUs:            int(valueOrZero(env.GPUs)),
			AllowInternet:   allowInternet,
			AgentTimeout:    seconds(float64(valueOrZero(tf.Agent.TimeoutSec)), 600),
			VerifierTimeout: seconds(float64(valueOrZero(tf.Verifier.TimeoutSec)), 600),
			Image:           env.DockerImage,
		},
	}
	return &TaskData{Task: t, File: tf, Rubric: rubric, Formula: formula, Weights: w}, nil
}

// valueOrZero reads an optional task.toml number; GameCraft leaves an absent
// limit at zero rather than Harbor's default.
func valueOrZero[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func seconds(s, def float64) time.Duration {
	if s <= 0 {
		s = def
	}
	return time.Duration(s * float64(time.Second))
}

// categoryWeights derives a formula's weights on M, D, V, A by evaluating it
// with BUILD=1 and unit inputs for one category at a time. It also checks
// the formula is linear in the category means (zero inputs give 0, half
// inputs give half), which the weight view assumes.
func categoryWeights(f *Formula, r *Rubric) (Weights, error) {
	letters := []string{"M", "D", "V", "A"}
	eval := func(values map[string]float64) (float64, error) {
		vars := map[string]float64{"BUILD": 1}
		for _, q := range r.Requirements {
			l, err := categoryLetter(q.ID)
			if err != nil {
				return 0, err
			}
			vars[q.ID] = values[l]
		}
		return f.Eval(vars)
	}
	var w [4]float64
	for i, l := range letters {
		v, err := eval(map[string]float64{l: 1})
		if err != nil {
			return Weights{}, err
		}
		w[i] = v
	}
	probe := map[string]float64{"M": 0.5, "D": 0.25, "V": 0.75, "A": 0.125}
	got, err := eval(probe)
	if err != nil {
		return Weights{}, err
	}
	want := 0.5*w[0] + 0.25*w[1] + 0.75*w[2] + 0.125*w[3]
	zero, err := eval(nil)
	if err != nil {
		return Weights{}, err
	}
	if math.Abs(got-want) > 1e-9 || math.Abs(zero) > 1e-12 {
		return Weights{}, fmt.Errorf("score_formula is not a weighted sum of the category means")
	}
	return Weights{M: w[0], D: w[1], V: w[2], A: w[3]}, nil
}

// Name implements benchmark.Benchmark.
func (b *Benchmark) Name() string { return Name }

// Tasks implements benchmark.Benchmark; tasks are sorted by id.
func (b *Benchmark) Tasks(context.Context) ([]benchmark.Task, error) {
	out := make([]benchmark.Task, len(b.tasks))
	for i, td := range b.tasks {
		out[i] = td.Task
	}
	return out, nil
}

// Task returns the loaded data of one task, including its rubric.
func (b *Benchmark) Task(id string) (*TaskData, bool) {
	td, ok := b.byID[id]
	return td, ok
}

func (b *Benchmark) lookup(t benchmark.Task) (*TaskData, error) {
	td, ok := b.byID[t.ID]
	if !ok {
		return nil, fmt.Errorf("gamecraft: unknown task %q", t.ID)
	}
	return td, nil
}

// gameDir is the Godot project folder inside a workspace.
const gameDir = "game"

// InitialWorkspace writes A_0: an empty game/ project folder.
func (b *Benchmark) InitialWorkspace(_ context.Context, t benchmark.Task, dir string) error {
	if _, err := b.lookup(t); err != nil {
		return err
	}
	return os.MkdirAll(filepath.Join(dir, gameDir), 0o755)
}
