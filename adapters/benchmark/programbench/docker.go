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
	defaultCompileTimeout = 10 * time.Minute
	DefaultTestTimeout    = 30 * time.Minute
)

// DockerEvaluator runs ProgramBench's evaluation as upstream's Evaluator
// does, in one container: files whose SHA-256 is in eval_clean_hashes are
// deleted from the submission, ./compile.sh builds ./executable (a failing
// compile.sh is compile_failed, no ./executable is copy_executable_failed:
// score 0, every test not_run), then each active test branch runs from that
// post-compile state (whatever compile.sh installed outside the workspace
// stays): the workspace is wiped, the branch's tests and the executable are
// put in, and eval/run.sh writes eval/results.xml as JUnit. Its Run is a
// Runner.
type DockerEvaluator struct {
	Docker *docker.Client
	// Image has the toolchain compile.sh needs and the tests' runtime; the
	// instance's own :task image (Images) is used instead when present.
	Image  string
	Images InstanceImages
	// TestsRoot holds <instance>/<branch>/ trees (evaluator-only: eval/run.sh
	// and the tests); they enter the workspace only after compilation.
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

// branchError is upstream's TestBranchError.
type branchError struct {
	ErrorCode    string `json:"error_code"`
	ErrorDetails string `json:"error_details"`
}

// evalOutput is upstream's EvaluationResult (eval/eval.py).
type evalOutput struct {
	TestResults      []TestResult             `json:"test_results"`
	ErrorCode        *string                  `json:"error_code"`
	ErrorDetails     *string                  `json:"error_details"`
	Log              []evalLog                `json:"log"`
	SolutionBranch   string                   `json:"solution_branch"`
	TestBranches     []string                 `json:"test_branches"`
	TestBranchErrors map[string][]branchError `json:"test_branch_errors"`
	ExecutableHash   *string                  `json:"executable_hash"`
	Warnings         []string                 `json:"warnings"`
}

// Submission failures upstream records as error_code with a zero score.
const (
	CompileFailed        = "compile_failed"
	copyExecutableFailed = "copy_executable_failed"
)

// Run evaluates the submission in workspace (a copy the caller owns; it is
// modified). What the submission gets wrong ends as upstream's error codes
// with every test not_run; only infrastructure failures are Go errors.
func (d DockerEvaluator) Run(ctx context.Context, inst *Instance, workspace string) ([]byte, error) {
	if ref := d.Images.local(ctx, inst.ID, TaskTag); ref != "" {
		d.Image = ref
	}
	if d.Docker == nil || d.Image == "" {
		return nil, fmt.Errorf("programbench: evaluating %s needs Docker and an image (%s is not present locally and no eval_image is configured)",
			inst.ID, upstreamImage(d.Images.Repo, inst.ID, TaskTag))
	}
	if inst.Tests == nil {
		return nil, fmt.Errorf("programbench: %s has no tests.json: nothing to run", inst.ID)
	}
	out := evalOutput{SolutionBranch: "submission", TestBranchErrors: map[string][]branchError{}, TestResults: []TestResult{}, Warnings: []string{}}
	branches := activeBranches(inst)
	out.TestBranches = branches
	failed := func(code, details string) ([]byte, error) {
		out.ErrorCode, out.ErrorDetails = &code, &details
		for _, b := range branches {
			out.TestResults = append(out.TestResults, notRun(inst, b, code)...)
		}
		return json.MarshalIndent(out, "", "  ")
	}
	removed, err := removeCleanHashes(workspace, inst.Task.EvalCleanHashes)
	if err != nil {
		return nil, err
	}
	out.Log = append(out.Log, evalLog{Step: "remove_hashed_files", Command: "delete files whose sha256 is in eval_clean_hashes", Output: strings.Join(removed, "\n")})
	env, err := d.start(ctx, workspace)
	if err != nil {
		return nil, err
	}
	defer env.Close(context.WithoutCancel(ctx))
	timeout := d.CompileTimeout
	if timeout <= 0 {
		timeout = defaultCompileTimeout
	}
	ex, err := step(ctx, env, &out, "compile", "chmod +x ./compile.sh && ./compile.sh", timeout)
	if err != nil {
		return nil, fmt.Errorf("programbench: compile: %w", err)
	}
	if ex.Code != 0 {
		return failed(CompileFailed, strings.TrimSpace(out.Log[len(out.Log)-1].Output))
	}
	exe, err := os.ReadFile(filepath.Join(workspace, "executable"))
	if errors.Is(err, os.ErrNotExist) {
		return failed(copyExecutableFailed, "compile.sh succeeded but left no ./executable")
	}
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(exe)
	hash := hex.EncodeToString(sum[:])
	out.ExecutableHash = &hash
	for _, b := range branches {
		res, err := d.runBranch(ctx, env, inst, b, workspace, exe, &out)
		if err != nil {
			return nil, err
		}
		out.TestResults = append(out.TestResults, res...)
	}
	return json.MarshalIndent(out, "", "  ")
}

// notRun is every expected test of a branch as not_run with the code.
func notRun(inst *Instance, branch, code string) []TestResult {
	var rs []TestResult
	for _, name := range inst.Tests.Branches[branch].Tests {
		rs = append(rs, TestResult{Name: name, Branch: branch, Status: "not_run", Extra: map[string]any{"error_code": code}})
	}
	return rs
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

// runBranch runs one test branch in the post-compile container: the
// workspace is wiped, the branch's tests and the executable are put in, and
// its JUnit report becomes results. A branch that yields no report gets a
// test_branch_errors entry and its tests not_run.
func (d DockerEvaluator) runBranch(ctx context.Context, env *docker.Environment, inst *Instance, branch, workspace string, exe []byte, out *evalOutput) ([]TestResult, error) {
	expected := inst.Tests.Branches[branch].Tests
	src := filepath.Join(d.TestsRoot, inst.ID, branch)
	if _, err := os.Stat(filepath.Join(src, "eval", "run.sh")); err != nil {
		return nil, fmt.Errorf("programbench: tests of %s branch %s: %w", inst.ID, branch, err)
	}
	if ex, err := step(ctx, env, out, "wipe_workspace_for_tests", "rm -rf "+WorkspacePath+"/* "+WorkspacePath+"/.[!.]*", time.Minute); err != nil || ex.Code != 0 {
		return nil, fmt.Errorf("programbench: wiping the workspace for branch %s: exit %d %v", branch, ex.Code, err)
	}
	if err := os.CopyFS(workspace, os.DirFS(src)); err != nil {
		return nil, fmt.Errorf("programbench: copying tests of branch %s: %w", branch, err)
	}
	if err := os.WriteFile(filepath.Join(workspace, "executable"), exe, 0o755); err != nil {
		return nil, err
	}
	timeout := d.TestTimeout
	if timeout <= 0 {
		timeout = DefaultTestTimeout
	}
	if _, err := step(ctx, env, out, "run_tests", "rm -f eval/results.xml results.xml && chmod +x ./eval/run.sh ./executable && ./eval/run.sh", timeout); err != nil {
		return nil, fmt.Errorf("programbench: branch %s: %w", branch, err)
	}
	branchFailed := func(code, details string) ([]TestResult, error) {
		out.TestBranchErrors[branch] = append(out.TestBranchErrors[branch], branchError{ErrorCode: code, ErrorDetails: details})
		return notRun(inst, branch, code), nil
	}
	data, err := os.ReadFile(filepath.Join(workspace, "eval", "results.xml"))
	if err != nil || len(bytes.TrimSpace(data)) == 0 {
		return branchFailed("results_read_failed", "no eval/results.xml after eval/run.sh")
	}
	res, err := resultsFromJUnit(branch, data, expected)
	if err != nil {
		return branchFailed("xml_parse_failed", err.Error())
	}
	return res, nil
}

func tailString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
