// Package builtin is a small offline benchmark of shell-script tasks that
// makes the whole pipeline run without network, Docker or a model. Each task
// has a public specification, starting files, public runtime checks, and
// hidden test cases that only Evaluate runs (they live in the binary and are
// never written where an agent can read them). Its scores are a plumbing
// check, not a research result.
package builtin

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/runrecord"
)

// Name is the benchmark name in records.
const Name = "builtin"

type testCase struct {
	args []string
	want string // expected stdout, compared after trimming trailing newlines
	code int    // expected exit code
}

type task struct {
	id, family, spec string
	script           string
	files            map[string]string
	example          []string // public example invocation, also a runtime check
	hidden           []testCase
}

var tasks = []task{
	{
		id: "greet", family: "text", script: "greet.sh",
		spec: "Write an executable POSIX shell script `greet.sh` in the project root.\n" +
			"`./greet.sh NAME` prints `Hello, NAME!` and exits 0. Without an argument it prints\n" +
			"`Hello, World!`. Several arguments are joined with single spaces into one name.\n",
		files:   map[string]string{"README.md": "# greet\n"},
		example: []string{"Ada"},
		hidden: []testCase{
			{[]string{"Ada"}, "Hello, Ada!", 0}, {nil, "Hello, World!", 0},
			{[]string{"Grace", "Hopper"}, "Hello, Grace Hopper!", 0},
		},
	},
	{
		id: "fizzbuzz", family: "numbers", script: "fizzbuzz.sh",
		spec: "Write an executable POSIX shell script `fizzbuzz.sh` in the project root.\n" +
			"`./fizzbuzz.sh N` prints the numbers 1 to N, one per line, but `Fizz` for multiples of 3,\n" +
			"`Buzz` for multiples of 5 and `FizzBuzz` for multiples of both. `N` = 0 prints nothing.\n" +
			"A missing or non-numeric N prints `usage: fizzbuzz.sh N` to stderr and exits 2.\n",
		files:   map[string]string{"README.md": "# fizzbuzz\n"},
		example: []string{"5"},
		hidden: []testCase{
			{[]string{"15"}, "1\n2\nFizz\n4\nBuzz\nFizz\n7\n8\nFizz\nBuzz\n11\nFizz\n13\n14\nFizzBuzz", 0},
			{[]string{"1"}, "1", 0}, {[]string{"0"}, "", 0}, {nil, "", 2}, {[]string{"x"}, "", 2},
		},
	},
	{
		id: "calc", family: "numbers", script: "calc.sh",
		spec: "Write an executable POSIX shell script `calc.sh` in the project root.\n" +
			"`./calc.sh A OP B` prints the integer result of A OP B for OP in `+`, `-`, `x`, `/`\n" +
			"(integer division, truncating). Division by zero prints `error: division by zero` to\n" +
			"stderr and exits 1. An unknown operator exits 2.\n",
		files:   map[string]string{"README.md": "# calc\n"},
		example: []string{"2", "+", "3"},
		hidden: []testCase{
			{[]string{"2", "+", "3"}, "5", 0}, {[]string{"7", "-", "10"}, "-3", 0},
			{[]string{"6", "x", "7"}, "42", 0}, {[]string{"7", "/", "2"}, "3", 0},
			{[]string{"1", "/", "0"}, "", 1}, {[]string{"1", "%", "2"}, "", 2},
		},
	},
}

// Benchmark is the built-in benchmark.
type Benchmark struct{}

func (Benchmark) Name() string { return Name }

// Tasks lists the built-in tasks.
func (Benchmark) Tasks(context.Context) ([]benchmark.Task, error) {
	var out []benchmark.Task
	for _, t := range tasks {
		out = append(out, benchmark.Task{Benchmark: Name, ID: t.id, Name: t.id, Family: t.family,
			Spec: t.spec, Limits: benchmark.Limits{AgentTimeout: 10 * time.Minute}})
	}
	return out, nil
}

func lookup(id string) (task, error) {
	for _, t := range tasks {
		if t.id == id {
			return t, nil
		}
	}
	return task{}, fmt.Errorf("builtin: unknown task %q", id)
}

// InitialWorkspace writes the task's starting files (A_0).
func (Benchmark) InitialWorkspace(_ context.Context, bt benchmark.Task, dir string) error {
	t, err := lookup(bt.ID)
	if err != nil {
		return err
	}
	for name, content := range t.files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Check runs the public checks: the script exists, parses, and runs the
// example from the specification.
func (Benchmark) Check(ctx context.Context, bt benchmark.Task, dir string) ([]runrecord.CheckResult, error) {
	t, err := lookup(bt.ID)
	if err != nil {
		return nil, err
	}
	script := filepath.Join(dir, t.script)
	if _, err := os.Stat(script); err != nil {
		return []runrecord.CheckResult{{Name: "exists", Command: "test -f " + t.script, ExitCode: 1,
			Output: t.script + " does not exist"}}, nil
	}
	syntax, err := run(ctx, dir, true, "sh", "-n", t.script)
	if err != nil {
		return nil, err
	}
	example, err := run(ctx, dir, true, append([]string{"sh", t.script}, t.example...)...)
	if err != nil {
		return nil, err
	}
	return []runrecord.CheckResult{
		{Name: "syntax", Command: "sh -n " + t.script, ExitCode: syntax.code, Passed: syntax.code == 0, Output: syntax.out},
		{Name: "example", Command: "sh " + strings.Join(append([]string{t.script}, t.example...), " "),
			ExitCode: example.code, Passed: example.code == 0, Output: example.out},
	}, nil
}

// caseWallTimeout bounds one check or hidden case, the confined view's
// set-up included. A case takes milliseconds, but on a busy machine the
// set-up alone took over 5 s and a correct script lost cases: a score must
// not depend on the machine's load, so the bound is only against a script
// that never ends.
const caseWallTimeout = 60 * time.Second

type ran struct {
	code int
	out  string
}

// run runs the artifact's command confined (sandbox.Confined): the artifact
// is the agent's work, so it sees dir read-only, a private /tmp and the
// system's runtime, as an unprivileged uid with no network; never the host.
// dir is hoh's export of a checkpoint, which root owns: it is shown with
// root's files as the command's own (sandbox.Mount.AsRole), not walked at
// every case to hand its entries over (issue 42).
// stderr goes to out too when both. An error is infrastructure: the
// command could not be run at all.
func run(ctx context.Context, dir string, both bool, args ...string) (ran, error) {
	var stdout, stderr bytes.Buffer
	cmd := sandbox.Command{Args: args, Dir: dir, Env: []string{"PATH=/usr/bin:/bin", "LC_ALL=C"},
		Stdout: &stdout, Stderr: &stderr, WallTimeout: caseWallTimeout}
	if both {
		cmd.Stderr = &stdout
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ran{}, err
	}
	ex, err := sandbox.Confined{View: sandbox.View{Mounts: []sandbox.Mount{{Source: abs, Target: abs, AsRole: true}}}}.Run(ctx, cmd)
	if err != nil {
		return ran{}, fmt.Errorf("builtin: running %s: %w", strings.Join(args, " "), err)
	}
	out := stdout.String()
	if len(out) > 4000 {
		out = out[:4000] + "\n[truncated]"
	}
	return ran{ex.Code, out}, nil
}

// Evaluate runs the hidden cases on the frozen artifact: metric pass_rate is
// the percentage of cases whose stdout and exit code match.
func (Benchmark) Evaluate(ctx context.Context, bt benchmark.Task, dir string) (runrecord.Evaluation, error) {
	t, err := lookup(bt.ID)
	if err != nil {
		return runrecord.Evaluation{}, err
	}
	passed := 0
	var failures []string
	if _, err := os.Stat(filepath.Join(dir, t.script)); err != nil {
		// No script, no credit: a missing file must not pass the error cases.
		return runrecord.Evaluation{Metrics: map[string]float64{"pass_rate": 0},
			Details: map[string]any{"passed": 0, "total": len(t.hidden), "missing": t.script}}, nil
	}
	for i, c := range t.hidden {
		r, err := run(ctx, dir, false, append([]string{"sh", t.script}, c.args...)...)
		if err != nil {
			return runrecord.Evaluation{}, err
		}
		got := strings.TrimRight(r.out, "\n")
		if r.code == c.code && (c.code != 0 || got == c.want) {
			passed++
		} else {
			failures = append(failures, fmt.Sprintf("case %d", i+1))
		}
	}
	sort.Strings(failures)
	return runrecord.Evaluation{
		Metrics: map[string]float64{"pass_rate": 100 * float64(passed) / float64(len(t.hidden))},
		Details: map[string]any{"passed": passed, "total": len(t.hidden), "failed_cases": failures,
			"note": "built-in benchmark: a plumbing check, not a research result"},
	}, nil
}
