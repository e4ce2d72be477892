package programbench

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/adapters/sandbox/docker"
)

// WorkspacePath is where the submission and the tests live in ProgramBench
// containers.
const WorkspacePath = "/workspace"

// Default evaluation timeouts.
const (
	DefaultCompileTimeout = 10 * time.Minute
	DefaultTestTimeout    = 30 * time.Minute
)

// DockerEvaluator runs ProgramBench's evaluation in fresh containers:
// files whose SHA-256 is in eval_clean_hashes are deleted from the
// submission, ./compile.sh builds ./executable in a no-network container,
// then each active test branch runs in its own fresh container holding only
// that executable and the branch's tests (eval/run.sh writing
// eval/results.xml as JUnit). Its Run is a Runner.
type DockerEvaluator struct {
	Docker *docker.Client
	// Image has the toolchain compile.sh needs and the tests' runtime.
	Image string
	// TestsRoot holds <instance>/<branch>/ trees (evaluator-only: eval/run.sh
	// and the tests); they are copied into the test container only.
	TestsRoot      string
	CompileTimeout time.Duration
	TestTimeout    time.Duration
	CPUs           float64
	MemoryMB       int64
}

// evalLog is one step of eval.json's log.
type evalLog struct {
	Step       string  `json:"step"`
	Command    string  `json:"command"`
	WallTime   float64 `json:"wall_time"`
	Output     string  `json:"output"`
	ReturnCode int     `json:"returncode"`
}

type evalOutput struct {
	TestResults      []TestResult      `json:"test_results"`
	ErrorCode        *string           `json:"error_code"`
	ErrorDetails     *string           `json:"error_details"`
	Log              []evalLog         `json:"log"`
	SolutionBranch   string            `json:"solution_branch"`
	TestBranches     []string          `json:"test_branches"`
	TestBranchErrors map[string]string `json:"test_branch_errors"`
	ExecutableHash   string            `json:"executable_hash"`
	Warnings         []string          `json:"warnings"`
}

// Run evaluates the submission in workspace (a copy the caller owns; it is
// modified). What the submission gets wrong (no compile.sh, a failing build,
// no executable, a missing results file) leaves tests not_run and is
// recorded in warnings, not error_code: only infrastructure failures are
// errors.
func (d DockerEvaluator) Run(ctx context.Context, inst *Instance, workspace string) ([]byte, error) {
	if d.Docker == nil || d.Image == "" {
		return nil, errors.New("programbench: DockerEvaluator needs Docker and Image")
	}
	out := evalOutput{SolutionBranch: "submission", TestBranchErrors: map[string]string{}, TestResults: []TestResult{}, Warnings: []string{}}
	branches := activeBranches(inst)
	out.TestBranches = branches
	notRun := func(why string) ([]byte, error) {
		out.Warnings = append(out.Warnings, why)
		for _, b := range branches {
			r, _ := ResultsFromJUnit(b, []byte("<testsuites/>"), inst.Tests.Branches[b].Tests)
			out.TestResults = append(out.TestResults, r...)
		}
		return json.MarshalIndent(out, "", "  ")
	}
	if inst.Tests == nil {
		return nil, fmt.Errorf("programbench: %s has no tests.json: nothing to run", inst.ID)
	}
	removed, err := removeCleanHashes(workspace, inst.Task.EvalCleanHashes)
	if err != nil {
		return nil, err
	}
	out.Log = append(out.Log, evalLog{Step: "remove_clean_hashes", Command: "delete files whose sha256 is in eval_clean_hashes", Output: strings.Join(removed, "\n")})
	if _, err := os.Stat(filepath.Join(workspace, "compile.sh")); err != nil {
		return notRun("submission has no ./compile.sh: nothing was compiled")
	}
	exe, err := d.compile(ctx, workspace, &out)
	if err != nil {
		return nil, err
	}
	if exe == nil {
		return notRun("compilation did not produce ./executable")
	}
	sum := sha256.Sum256(exe)
	out.ExecutableHash = hex.EncodeToString(sum[:])
	for _, b := range branches {
		res, err := d.runBranch(ctx, inst, b, exe, &out)
		if err != nil {
			return nil, err
		}
		out.TestResults = append(out.TestResults, res...)
	}
	return json.MarshalIndent(out, "", "  ")
}

func activeBranches(inst *Instance) []string {
	var bs []string
	if inst.Tests != nil {
		for id, b := range inst.Tests.Branches {
			if !b.Ignored {
				bs = append(bs, id)
			}
		}
	}
	sort.Strings(bs)
	return bs
}

// removeCleanHashes deletes regular files whose SHA-256 is listed (the
// original executable and similar files a submission may not reuse).
func removeCleanHashes(dir string, hashes []string) ([]string, error) {
	if len(hashes) == 0 {
		return nil, nil
	}
	want := map[string]bool{}
	for _, h := range hashes {
		want[strings.ToLower(h)] = true
	}
	var removed []string
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		if want[hex.EncodeToString(sum[:])] {
			rel, _ := filepath.Rel(dir, p)
			removed = append(removed, rel)
			return os.Remove(p)
		}
		return nil
	})
	return removed, err
}

func (d DockerEvaluator) start(ctx context.Context, workspace string) (*docker.Environment, error) {
	return d.Docker.Start(ctx, docker.Spec{Image: d.Image, Workspace: workspace, WorkspacePath: WorkspacePath,
		CPUs: d.CPUs, MemoryMB: d.MemoryMB, Labels: map[string]string{"hoh.role": "programbench-eval"}})
}

// step runs one shell command in the workspace and logs it.
func step(ctx context.Context, env *docker.Environment, out *evalOutput, name, script string, timeout time.Duration) (sandbox.Exit, error) {
	var buf bytes.Buffer
	ex, err := env.Executor().Run(ctx, sandbox.Command{Args: []string{"/bin/sh", "-c", script}, Dir: WorkspacePath,
		Stdout: &buf, Stderr: &buf, WallTimeout: timeout})
	out.Log = append(out.Log, evalLog{Step: name, Command: script, WallTime: ex.Duration.Seconds(),
		Output: tailString(buf.String(), 4000), ReturnCode: ex.Code})
	return ex, err
}

// compile builds ./executable in a fresh container; nil bytes when the
// submission produced none.
func (d DockerEvaluator) compile(ctx context.Context, workspace string, out *evalOutput) ([]byte, error) {
	env, err := d.start(ctx, workspace)
	if err != nil {
		return nil, err
	}
	defer env.Close(context.WithoutCancel(ctx))
	timeout := d.CompileTimeout
	if timeout <= 0 {
		timeout = DefaultCompileTimeout
	}
	ex, err := step(ctx, env, out, "compile", "chmod +x ./compile.sh && ./compile.sh", timeout)
	if err != nil {
		return nil, fmt.Errorf("programbench: compile: %w", err)
	}
	if ex.Code != 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("compile.sh exited with %d %s", ex.Code, ex.Detail))
	}
	exe, err := os.ReadFile(filepath.Join(workspace, "executable"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return exe, err
}

// runBranch runs one test branch against the compiled executable in a
// fresh container and turns its JUnit report into results.
func (d DockerEvaluator) runBranch(ctx context.Context, inst *Instance, branch string, exe []byte, out *evalOutput) ([]TestResult, error) {
	expected := inst.Tests.Branches[branch].Tests
	src := filepath.Join(d.TestsRoot, inst.ID, branch)
	if _, err := os.Stat(filepath.Join(src, "eval", "run.sh")); err != nil {
		return nil, fmt.Errorf("programbench: tests of %s branch %s: %w", inst.ID, branch, err)
	}
	ws, err := os.MkdirTemp("", "hoh-pb-tests-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(ws)
	if err := os.CopyFS(ws, os.DirFS(src)); err != nil {
		return nil, fmt.Errorf("programbench: copying tests of branch %s: %w", branch, err)
	}
	if err := os.WriteFile(filepath.Join(ws, "executable"), exe, 0o755); err != nil {
		return nil, err
	}
	env, err := d.start(ctx, ws)
	if err != nil {
		return nil, err
	}
	defer env.Close(context.WithoutCancel(ctx))
	timeout := d.TestTimeout
	if timeout <= 0 {
		timeout = DefaultTestTimeout
	}
	ex, err := step(ctx, env, out, "run_tests "+branch, "rm -f eval/results.xml && chmod +x ./eval/run.sh ./executable && ./eval/run.sh", timeout)
	if err != nil {
		return nil, fmt.Errorf("programbench: branch %s: %w", branch, err)
	}
	data, rerr := os.ReadFile(filepath.Join(ws, "eval", "results.xml"))
	if rerr != nil {
		out.TestBranchErrors[branch] = fmt.Sprintf("no eval/results.xml (run.sh exit %d %s)", ex.Code, ex.Detail)
		data = []byte("<testsuites/>")
	}
	res, err := ResultsFromJUnit(branch, data, expected)
	if err != nil {
		out.TestBranchErrors[branch] = err.Error()
		res, _ = ResultsFromJUnit(branch, []byte("<testsuites/>"), expected)
	}
	return res, nil
}

func tailString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
