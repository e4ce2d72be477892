package programbench

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/internal/fstree"
	"github.com/hoh-research/hoh/runrecord"
)

// Name is the benchmark name used in Task.Benchmark and records.
const Name = "programbench"

// Spec is the public task statement hoh gives every instance. The original
// repository is not named: the clean-room setting gives only the executable
// and its docs.
const Spec = `# Clean-room reimplementation

The workspace holds ./executable, a compiled program, and its documentation.
Reimplement the program from scratch so that it behaves the same way.

Deliver source code and an executable script ./compile.sh that, run from a
fresh copy of this workspace without network access, builds ./executable
from your source. The original ./executable is removed before compile.sh
runs. Behaviour is checked by hidden tests that run ./executable.
`

// Runner runs ProgramBench's evaluation of a workspace (compile in a fresh
// container, run every test branch) and returns eval.json-like output. The
// Docker sandbox provides one; this package only scores.
type Runner func(ctx context.Context, inst *Instance, workspace string) (evalJSON []byte, err error)

// Options configure the adapter.
type Options struct {
	// CleanroomRoot holds <instance>/ folders with the executable and docs
	// for A_0. Empty: <task dir>/cleanroom/.
	CleanroomRoot string
	// Runner evaluates a workspace; nil means evaluation cannot run here.
	// DockerRunner provides one.
	Runner Runner
	// AgentImage is the local image the agent's container runs
	// (ContainerImage); A_0 itself is bind-mounted, not baked in.
	AgentImage string
	// Images are upstream's per-instance images, preferred when present.
	Images InstanceImages
}

// Benchmark is a loaded ProgramBench checkout.
type Benchmark struct {
	Root      string
	Opts      Options
	instances []*Instance
	byID      map[string]*Instance
}

var _ benchmark.Benchmark = (*Benchmark)(nil)

// Load reads every instance; any problem is an error naming the file.
func Load(root string) (*Benchmark, error) {
	insts, errs := scan(root)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	b := &Benchmark{Root: root, instances: insts, byID: map[string]*Instance{}}
	for _, in := range insts {
		b.byID[in.ID] = in
	}
	return b, nil
}

// Instance returns one loaded instance.
func (b *Benchmark) Instance(id string) (*Instance, bool) {
	in, ok := b.byID[id]
	return in, ok
}

// Name implements benchmark.Benchmark.
func (b *Benchmark) Name() string { return Name }

// taskOf converts an instance to a hoh task: Family is the original
// language, Category the difficulty.
func taskOf(in *Instance) benchmark.Task {
	return benchmark.Task{
		Benchmark: Name,
		ID:        in.ID,
		Name:      in.Task.Repository,
		Family:    in.Task.Language,
		Category:  in.Task.Difficulty,
		Spec:      Spec,
		Dir:       in.Dir,
		Limits:    benchmark.Limits{AllowInternet: false},
	}
}

// Tasks implements benchmark.Benchmark.
func (b *Benchmark) Tasks(context.Context) ([]benchmark.Task, error) {
	out := make([]benchmark.Task, len(b.instances))
	for i, in := range b.instances {
		out[i] = taskOf(in)
	}
	return out, nil
}

func (b *Benchmark) lookup(t benchmark.Task) (*Instance, error) {
	in, ok := b.byID[t.ID]
	if !ok {
		return nil, fmt.Errorf("programbench: unknown instance %q", t.ID)
	}
	return in, nil
}

// isCleanroomFile admits only the executable and documentation into A_0:
// never tests or source.
func isCleanroomFile(rel string) bool {
	rel = filepath.ToSlash(rel)
	parts := strings.Split(rel, "/")
	for _, p := range parts[:len(parts)-1] {
		switch strings.ToLower(p) {
		case "test", "tests", "eval", "src", ".git":
			return false
		}
	}
	if rel == "executable" {
		return true
	}
	top := strings.ToLower(parts[0])
	if len(parts) > 1 && (top == "doc" || top == "docs" || top == "man") {
		return true
	}
	base := strings.ToLower(parts[len(parts)-1])
	for _, p := range []string{"readme", "license", "copying", "changelog", "manual"} {
		if strings.HasPrefix(base, p) {
			return true
		}
	}
	switch strings.ToLower(filepath.Ext(base)) {
	case ".md", ".txt", ".rst", ".adoc", ".html", ".1", ".5", ".7", ".8":
		return true
	}
	return false
}

// InitialWorkspace writes A_0: the executable and docs from the instance's
// clean-room folder; other files there (tests, sources) are left out.
func (b *Benchmark) InitialWorkspace(_ context.Context, t benchmark.Task, dir string) error {
	in, err := b.lookup(t)
	if err != nil {
		return err
	}
	src := filepath.Join(in.Dir, "cleanroom")
	if b.Opts.CleanroomRoot != "" {
		src = filepath.Join(b.Opts.CleanroomRoot, in.ID)
	}
	if _, err := os.Stat(filepath.Join(src, "executable")); err != nil {
		return fmt.Errorf("programbench: no clean-room executable for %s at %s (ProgramBench ships it in its task image, which is not on this host): %w", in.ID, src, err)
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() || !d.Type().IsRegular() || !isCleanroomFile(rel) {
			return nil
		}
		return copyFile(p, filepath.Join(dir, rel))
	})
}

func copyFile(src, dst string) error {
	return fstree.Copy(src, dst, fstree.Options{})
}

// Check is the public check: ./compile.sh exists and is valid shell syntax.
// It runs nothing the agent wrote beyond bash's parser.
func (b *Benchmark) Check(ctx context.Context, t benchmark.Task, dir string) ([]runrecord.CheckResult, error) {
	if _, err := b.lookup(t); err != nil {
		return nil, err
	}
	script := filepath.Join(dir, "compile.sh")
	res := runrecord.CheckResult{Name: "compile-script", Command: "bash -n ./compile.sh", ExitCode: -1}
	if _, err := os.Stat(script); err != nil {
		res.Output = "./compile.sh is missing: the evaluation builds ./executable with it"
		return []runrecord.CheckResult{res}, nil
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		res.Unavailable = true
		res.Output = "bash is not installed: cannot check ./compile.sh"
		return []runrecord.CheckResult{res}, nil
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, bash, "-n", script)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	res.Output = string(out)
	var ee *exec.ExitError
	switch {
	case err == nil:
		res.ExitCode, res.Passed = 0, true
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
	default:
		res.Output += err.Error()
	}
	return []runrecord.CheckResult{res}, nil
}

// evaluationOf turns a Score and the raw eval.json into a record evaluation:
// pass_rate (0-100), tests_passed, tests_total, resolved and almost_resolved
// (0/1). An evaluator error_code goes to Error.
func evaluationOf(s Score, r *EvalResult, raw []byte) runrecord.Evaluation {
	ev := runrecord.Evaluation{Metrics: map[string]float64{
		"pass_rate":       s.PassRate(),
		"tests_passed":    float64(s.Passed),
		"tests_total":     float64(s.Total),
		"resolved":        b2f(s.Total > 0 && s.Passed == s.Total),
		"almost_resolved": b2f(s.PassRate() >= 95-1e-9),
	}}
	if raw != nil {
		ev.Details = map[string]any{"eval_json": string(raw)}
	}
	if r != nil && r.ErrorCode != nil && submissionFailure(*r.ErrorCode) {
		// The submission's own failure: a zero score, not a failed evaluation.
		if ev.Details == nil {
			ev.Details = map[string]any{}
		}
		ev.Details["error_code"] = *r.ErrorCode
		return ev
	}
	if r != nil && r.ErrorCode != nil {
		ev.Error = "evaluator error " + *r.ErrorCode
		if r.ErrorDetails != nil {
			ev.Error += ": " + *r.ErrorDetails
		}
	}
	return ev
}

// submissionFailure: error codes upstream gives a submission whose build
// fails (its compile step or the executable it should leave).
func submissionFailure(code string) bool {
	return code == CompileFailed || code == copyExecutableFailed
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Evaluate runs the configured Runner and scores its eval.json output.
// Without a Runner the instance cannot be evaluated: pass_rate 0 and Error.
func (b *Benchmark) Evaluate(ctx context.Context, t benchmark.Task, dir string) (runrecord.Evaluation, error) {
	in, err := b.lookup(t)
	if err != nil {
		return runrecord.Evaluation{}, err
	}
	if b.Opts.Runner == nil {
		ev := evaluationOf(Score{}, nil, nil)
		ev.Error = "ProgramBench evaluation needs a Docker runner (compile in a fresh container, run the hidden test branches); none is configured: pass_rate 0"
		return ev, nil
	}
	raw, err := b.Opts.Runner(ctx, in, dir)
	if err != nil {
		ev := evaluationOf(Score{}, nil, nil)
		ev.Error = "evaluation runner failed: " + err.Error()
		return ev, nil
	}
	// The evaluator's own file stays with the checkpoint's records (hoh rescore reads it).
	if out := benchmark.OutputDir(ctx); out != "" {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return runrecord.Evaluation{}, err
		}
		if err := os.WriteFile(filepath.Join(out, evalFileName(in.ID)), raw, 0o644); err != nil {
			return runrecord.Evaluation{}, err
		}
	}
	return b.score(in, raw)
}

func (b *Benchmark) score(in *Instance, raw []byte) (runrecord.Evaluation, error) {
	r, err := parseEval(evalFileName(in.ID), raw)
	if err != nil {
		return runrecord.Evaluation{}, err
	}
	return evaluationOf(scoreResults(r.TestResults, in.Tests), r, raw), nil
}

// evalFileName is the name upstream's evaluator gives an instance's result.
func evalFileName(id string) string { return id + ".eval.json" }

// Rescore implements benchmark.Rescorer: the checkpoint's kept eval.json
// (or, in records made before it was kept as a file, the copy in the
// evaluation's details) scored again.
func (b *Benchmark) Rescore(t benchmark.Task, outputDir string, prev runrecord.Evaluation) (runrecord.Evaluation, error) {
	in, err := b.lookup(t)
	if err != nil {
		return runrecord.Evaluation{}, err
	}
	raw, err := os.ReadFile(filepath.Join(outputDir, evalFileName(in.ID)))
	if errors.Is(err, os.ErrNotExist) {
		s, ok := prev.Details["eval_json"].(string)
		if !ok {
			return runrecord.Evaluation{}, fmt.Errorf("%w: %s has no %s", benchmark.ErrNoEvaluatorOutput, outputDir, evalFileName(in.ID))
		}
		raw, err = []byte(s), nil
	}
	if err != nil {
		return runrecord.Evaluation{}, err
	}
	return b.score(in, raw)
}
