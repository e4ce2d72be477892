package gamecraft

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/harness/classify"
	"github.com/hoh-research/hoh/runrecord"
)

// Verifier runs a task's own tests/test.sh (upstream's
// `python3 -m gamecraft_bench.verifier`) in a private user+mount namespace
// laid out as the task's specs address it, as upstream's local runner does.
type Verifier struct {
	// GodotBin is the Godot 4 binary; empty means "godot" from PATH (a
	// missing Godot is a build failure the verifier itself reports).
	GodotBin string
	// Judge, JudgeModel set GAMECRAFT_BENCH_JUDGE and _MODEL (empty: upstream's default).
	Judge, JudgeModel string
	// JudgeKeyEnv names the variable holding the judge's key; only the name
	// is configured or recorded, the value passes through the environment.
	JudgeKeyEnv string
	// Timeout bounds one verification (default: the task's verifier timeout).
	Timeout time.Duration
	// PythonPath is the folder holding gamecraft_bench (default: the checkout's, when present).
	PythonPath string
}

// VerifierFiles are the verifier outputs kept with a checkpoint's records.
var VerifierFiles = []string{"reward.txt", BreakdownFile, "judge_log.json", "ctrf.json", "build.log"}

// nsScript lays out /workspace, /tests and /logs/verifier inside the
// namespace and runs test.sh. Arguments: game, assets, tools, tests, out.
const nsScript = `set -e
mount --make-rprivate /
mkdir -p /workspace /tests /logs
mount -t tmpfs hoh-workspace /workspace
mkdir -p /workspace/game /workspace/assets /workspace/tools
mount --bind "$1" /workspace/game
if [ -n "$2" ]; then mount --bind "$2" /workspace/assets; fi
if [ -n "$3" ]; then mount --bind "$3" /workspace/tools; fi
mount --bind "$4" /tests
mount -t tmpfs hoh-logs /logs
mkdir -p /logs/verifier
mount --bind "$5" /logs/verifier
set +e
cd /workspace/game
bash /tests/test.sh
`

// errEvaluationUnavailable marks verifications that could not run at all.
var errEvaluationUnavailable = errors.New("gamecraft: the task's verifier could not run")

// run verifies the checkpoint copy in game into out; an error means no
// verification happened (no python3, no namespace, no test.sh).
func (v *Verifier) run(ctx context.Context, root string, td *TaskData, game, out string) error {
	testsDir := filepath.Join(td.Task.Dir, "tests")
	if _, err := os.Stat(filepath.Join(testsDir, "test.sh")); err != nil {
		return fmt.Errorf("%w: %v", errEvaluationUnavailable, err)
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		return fmt.Errorf("%w: python3 is not installed: %v", errEvaluationUnavailable, err)
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return fmt.Errorf("%w: unshare (util-linux) is not installed: %v", errEvaluationUnavailable, err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	// A fresh, private bin folder puts the configured Godot first on PATH.
	bin, err := os.MkdirTemp(filepath.Dir(out), ".verifier-bin-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bin)
	env, err := v.hostEnv(root, bin, python)
	if err != nil {
		return err
	}
	timeout := v.Timeout
	if timeout <= 0 {
		timeout = td.Task.Limits.VerifierTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	assets := filepath.Join(td.Task.Dir, "workspace", "assets")
	if fi, err := os.Stat(assets); err != nil || !fi.IsDir() {
		assets = ""
	}
	tools := filepath.Join(root, "tools")
	if fi, err := os.Stat(tools); err != nil || !fi.IsDir() {
		tools = ""
	}
	cmd := exec.CommandContext(cctx, unshare, "--user", "--map-root-user", "--mount", "--propagation", "private",
		"bash", "-c", nsScript, "hoh-verifier", game, assets, tools, testsDir, out)
	cmd.Env = env
	cmd.WaitDelay = 10 * time.Second
	var stderr bytes.Buffer
	cmd.Stdout = &stderr
	cmd.Stderr = &stderr
	runErr := cmd.Run()
	if err := os.WriteFile(filepath.Join(filepath.Dir(out), filepath.Base(out)+".log"), stderr.Bytes(), 0o644); err != nil {
		return err
	}
	if cctx.Err() != nil && ctx.Err() == nil {
		return fmt.Errorf("%w: timed out after %s", errEvaluationUnavailable, timeout)
	}
	if runErr != nil {
		return fmt.Errorf("%w: %v: %s", errEvaluationUnavailable, runErr, classify.LastLines(stderr.String(), 5))
	}
	return nil
}

// hostEnv is the environment of the verifier's test.sh on the host: python3's
// folder on PATH, the configured Godot linked into bin and put first, and
// the judge's settings and key passed through.
func (v *Verifier) hostEnv(root, bin, python string) ([]string, error) {
	path := filepath.Dir(python) + string(os.PathListSeparator) + os.Getenv("PATH")
	env := []string{"HOME=" + os.Getenv("HOME"), "LANG=C.UTF-8", "GODOT_SILENCE_ROOT_WARNING=1",
		"XDG_DATA_HOME=" + filepath.Join(bin, "xdg")}
	if v.GodotBin != "" {
		if err := os.Symlink(v.GodotBin, filepath.Join(bin, "godot")); err != nil {
			return nil, err
		}
		path = bin + string(os.PathListSeparator) + path
		env = append(env, "GAMECRAFT_BENCH_GODOT_BIN="+v.GodotBin)
	}
	env = append(env, "PATH="+path)
	pp := v.PythonPath
	if pp == "" {
		if _, err := os.Stat(filepath.Join(root, "gamecraft_bench", "verifier")); err == nil {
			pp = root
		}
	}
	if pp != "" {
		env = append(env, "PYTHONPATH="+pp)
	}
	if v.Judge != "" {
		env = append(env, "GAMECRAFT_BENCH_JUDGE="+v.Judge)
	}
	if v.JudgeModel != "" {
		env = append(env, "GAMECRAFT_BENCH_JUDGE_MODEL="+v.JudgeModel)
	}
	for _, name := range []string{"DISPLAY", "XAUTHORITY", v.JudgeKeyEnv} {
		if name == "" {
			continue
		}
		if val, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+val)
		}
	}
	return env, nil
}

// verifierOutput is the empty folder a verifier of the checkpoint in dir
// writes to: the one the run gave (benchmark.OutputDir), else a temporary one
// that done removes. A previous attempt's files must not be scored as this
// one's, and the folder must not lie inside the agent's workspace.
func verifierOutput(ctx context.Context, dir string) (out string, done func(), err error) {
	done = func() {}
	out = benchmark.OutputDir(ctx)
	if out == "" {
		tmp, err := os.MkdirTemp("", "hoh-gamecraft-verifier-*")
		if err != nil {
			return "", done, err
		}
		done = func() { os.RemoveAll(tmp) }
		out = filepath.Join(tmp, "verifier")
	}
	if inside(dir, out) {
		done()
		return "", func() {}, fmt.Errorf("gamecraft: verifier output %s lies inside the agent workspace %s", out, dir)
	}
	if err := os.RemoveAll(out); err != nil {
		done()
		return "", func() {}, err
	}
	return out, done, nil
}

// verify runs the verifier for one checkpoint and scores its breakdown.json.
// Outputs go to the folder the run gave (benchmark.OutputDir), else a
// temporary one.
func (b *Benchmark) verify(ctx context.Context, td *TaskData, dir string) (runrecord.Evaluation, error) {
	out, done, err := verifierOutput(ctx, dir)
	if err != nil {
		return runrecord.Evaluation{}, err
	}
	defer done()
	game := filepath.Join(dir, gameDir)
	if err := os.MkdirAll(game, 0o755); err != nil {
		return runrecord.Evaluation{}, err
	}
	if err := b.Opts.Verifier.run(ctx, b.Root, td, game, out); err != nil {
		return runrecord.Evaluation{}, fmt.Errorf("task %s: %w", td.Task.ID, err)
	}
	data, err := os.ReadFile(filepath.Join(out, BreakdownFile))
	if err != nil {
		return runrecord.Evaluation{}, fmt.Errorf("task %s: %w: it wrote no %s (see %s.log)", td.Task.ID, errEvaluationUnavailable, BreakdownFile, out)
	}
	return scoreBreakdown(td, data)
}
