package builtin

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hoh-research/hoh/adapters/benchmark"
)

// Reference solutions, written here to prove the hidden cases are satisfiable.
var solutions = map[string]string{
	"greet.sh": "#!/bin/sh\nif [ $# -eq 0 ]; then echo 'Hello, World!'; else echo \"Hello, $*!\"; fi\n",
	"fizzbuzz.sh": "#!/bin/sh\ncase \"$1\" in ''|*[!0-9]*) echo 'usage: fizzbuzz.sh N' >&2; exit 2;; esac\n" +
		"i=1; while [ $i -le $1 ]; do\n if [ $((i%15)) -eq 0 ]; then echo FizzBuzz; elif [ $((i%3)) -eq 0 ]; then echo Fizz;\n" +
		" elif [ $((i%5)) -eq 0 ]; then echo Buzz; else echo $i; fi; i=$((i+1)); done\n",
	"calc.sh": "#!/bin/sh\ncase \"$2\" in\n+) echo $(($1+$3));; -) echo $(($1-$3));; x) echo $(($1*$3));;\n" +
		"/) if [ \"$3\" -eq 0 ]; then echo 'error: division by zero' >&2; exit 1; fi; echo $(($1/$3));;\n*) exit 2;; esac\n",
}

func TestReferenceSolutionsScore100AndEmptyScores0(t *testing.T) {
	ctx := context.Background()
	b := Benchmark{}
	ts, _ := b.Tasks(ctx)
	if len(ts) != 3 {
		t.Fatalf("want 3 tasks, got %d", len(ts))
	}
	for _, bt := range ts {
		task, _ := lookup(bt.ID)
		dir := t.TempDir()
		if err := b.InitialWorkspace(ctx, bt, dir); err != nil {
			t.Fatal(err)
		}
		ev, err := b.Evaluate(ctx, bt, dir)
		if err != nil || ev.Metrics["pass_rate"] != 0 {
			t.Fatalf("%s: empty workspace scored %v (%v)", bt.ID, ev.Metrics, err)
		}
		checks, _ := b.Check(ctx, bt, dir)
		if len(checks) != 1 || checks[0].Passed {
			t.Fatalf("%s: checks on empty workspace %+v", bt.ID, checks)
		}
		os.WriteFile(filepath.Join(dir, task.script), []byte(solutions[task.script]), 0o755)
		ev, err = b.Evaluate(ctx, bt, dir)
		if err != nil || ev.Metrics["pass_rate"] != 100 {
			t.Fatalf("%s: reference solution scored %v %v", bt.ID, ev.Metrics, ev.Details)
		}
		checks, _ = b.Check(ctx, bt, dir)
		for _, c := range checks {
			if !c.Passed {
				t.Fatalf("%s: check %s failed: %s", bt.ID, c.Name, c.Output)
			}
		}
	}
}

func TestHiddenCasesNeverReachSpecOrWorkspace(t *testing.T) {
	ctx := context.Background()
	b := Benchmark{}
	ts, _ := b.Tasks(ctx)
	for _, bt := range ts {
		task, _ := lookup(bt.ID)
		dir := t.TempDir()
		b.InitialWorkspace(ctx, bt, dir)
		var workspace strings.Builder
		filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				data, _ := os.ReadFile(p)
				workspace.Write(data)
			}
			return nil
		})
		for _, c := range task.hidden {
			if c.want == "" || strings.Contains(task.spec, c.want) && len(c.want) < 16 {
				continue // short outputs the spec states publicly (e.g. "Hello, World!")
			}
			if strings.Contains(bt.Spec, c.want) || strings.Contains(workspace.String(), c.want) {
				t.Errorf("%s: hidden expected output %q is visible", bt.ID, c.want)
			}
		}
	}
}

// Red-team: the checks and the hidden cases run the agent's script, so it
// runs confined. A greet.sh that answers correctly but also tries to write
// outside its directory, plant a file beside itself, read a file elsewhere
// on the machine and reach a loopback service does none of it, and still
// scores as the correct script it is.
func TestRedTeamArtifactRunsConfinedInChecksAndEvaluation(t *testing.T) {
	outside, err := os.MkdirTemp(".", "outside-") // not under /tmp: a view hides /tmp anyway
	if err != nil {
		t.Fatal(err)
	}
	outside, _ = filepath.Abs(outside)
	t.Cleanup(func() { os.RemoveAll(outside) })
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("the-host-secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	reached := make(chan bool, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			reached <- true
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	hostile := fmt.Sprintf(`#!/bin/sh
touch %[1]s/escaped 2>/dev/null
touch planted 2>/dev/null
cat %[2]s >&2 2>/dev/null
(exec 3<>/dev/tcp/127.0.0.1/%[3]d) 2>/dev/null
busybox nc -w 1 127.0.0.1 %[3]d </dev/null 2>/dev/null
if [ $# -eq 0 ]; then n=World; else n="$*"; fi
echo "Hello, $n!"
`, outside, secret, port)
	if err := os.WriteFile(filepath.Join(dir, "greet.sh"), []byte(hostile), 0o755); err != nil {
		t.Fatal(err)
	}
	b, task := Benchmark{}, benchmark.Task{Benchmark: Name, ID: "greet"}
	checks, err := b.Check(context.Background(), task, dir)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := b.Evaluate(context.Background(), task, dir)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Metrics["pass_rate"] != 100 {
		t.Errorf("the hostile but correct script scored %v (details %v)", ev.Metrics["pass_rate"], ev.Details)
	}
	for _, c := range checks {
		if strings.Contains(c.Output, "the-host-secret") {
			t.Errorf("check %s read a file elsewhere on the machine: %q", c.Name, c.Output)
		}
	}
	for _, p := range []string{filepath.Join(outside, "escaped"), filepath.Join(dir, "planted")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("the artifact wrote %s (stat: %v)", p, err)
		}
	}
	select {
	case <-reached:
		t.Error("the artifact reached a loopback service")
	default:
	}
}

// A checkpoint whose files and directories are closed to others (0600,
// 0700: a Developer's umask) is scored as the Developer saw it: the
// confined command reads hoh's export as its own, and the export keeps
// its owner and ctimes (nothing handed over by chown).
func TestAClosedCheckpointIsScoredAsItsDeveloperSawIt(t *testing.T) {
	ctx := context.Background()
	b := Benchmark{}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "lib"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "lib", "greeting"), []byte("Hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\ng=$(cat \"$(dirname \"$0\")/lib/greeting\") || exit 3\nif [ $# -eq 0 ]; then echo \"$g, World!\"; else echo \"$g, $*!\"; fi\n"
	if err := os.WriteFile(filepath.Join(dir, "greet.sh"), []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Lstat(filepath.Join(dir, "lib", "greeting"))
	ev, err := b.Evaluate(ctx, benchmark.Task{ID: "greet"}, dir)
	if err != nil || ev.Metrics["pass_rate"] != 100 {
		t.Fatalf("a closed but correct checkpoint scored %v %v (%v)", ev.Metrics, ev.Details, err)
	}
	after, _ := os.Lstat(filepath.Join(dir, "lib", "greeting"))
	if !after.ModTime().Equal(before.ModTime()) || after.Sys().(*syscall.Stat_t).Ctim != before.Sys().(*syscall.Stat_t).Ctim {
		t.Error("scoring changed the checkpoint's files on disk")
	}
}
