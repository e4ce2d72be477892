package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// waitPIDFile returns the pid a test script wrote to path.
func waitPIDFile(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if pid, ok := readPIDFile(t, path); ok {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("pid file %s never written", path)
	return 0
}

// readPIDFile returns the pid in path, if a test script has written it.
func readPIDFile(t *testing.T, path string) (int, bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || !strings.HasSuffix(string(b), "\n") {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file: %v", err)
	}
	return pid, true
}

// loadScales multiply the short timers of the tests below, tried in turn: on
// a loaded machine a timer can run out for real before the script got going,
// which is no fault of the code under test. Each test retries only on
// evidence of that, never on the failure it exists to catch.
var loadScales = []time.Duration{1, 4, 16}

// alive reports whether pid is a running process. A zombie (killed, parent
// gone, not yet reaped by init) answers kill(pid,0) but is not running.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

// stubbornScript: a child that ignores SIGTERM, recording its pid, then the
// leader waits (silent, or printing every 50ms when chatty).
func stubbornScript(pidFile string, chatty bool) string {
	leader := "wait"
	if chatty {
		leader = "while true; do echo tick; sleep 0.05; done"
	}
	return `trap '' TERM; (trap '' TERM; sleep 300) & echo $! > ` + pidFile + `.tmp; mv ` + pidFile + `.tmp ` + pidFile + `; ` + leader
}

func TestLocalWallTimeoutKillsGroupIgnoringSIGTERM(t *testing.T) {
	for _, scale := range loadScales {
		pidFile := filepath.Join(t.TempDir(), "child.pid")
		var out bytes.Buffer
		ex, err := Local{KillGrace: 200 * time.Millisecond}.Run(context.Background(), Command{
			Args:        []string{"bash", "-c", stubbornScript(pidFile, true)},
			Stdout:      &out,
			WallTimeout: 700 * time.Millisecond * scale,
			IdleTimeout: 5 * time.Second * scale,
		})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		// The script writes the pid right after starting its child; no file
		// after a wall timeout: the timer ran out before bash got that far.
		child, started := readPIDFile(t, pidFile)
		if !started && ex.TimedOut && scale != loadScales[len(loadScales)-1] {
			t.Logf("wall timeout %s ran out before the script started its child; longer timers", 700*time.Millisecond*scale)
			continue
		}
		if !started {
			t.Fatalf("the script never started its child: %+v", ex)
		}
		if !ex.TimedOut || ex.Idle {
			t.Fatalf("want wall timeout, got %+v", ex)
		}
		if ex.Code != -1 {
			t.Errorf("killed process should report code -1, got %d", ex.Code)
		}
		// The child ignores SIGTERM and sleeps 300 s: only the group kill
		// ends it.
		if alive(child) {
			t.Fatalf("child %d ignoring SIGTERM survived the timeout", child)
		}
		if !strings.Contains(out.String(), "tick") {
			t.Errorf("stdout not captured: %q", out.String())
		}
		return
	}
}

func TestLocalIdleTimeoutKillsSilentGroup(t *testing.T) {
	for _, scale := range loadScales {
		pidFile := filepath.Join(t.TempDir(), "child.pid")
		idle := 400 * time.Millisecond * scale
		ex, _ := Local{KillGrace: 200 * time.Millisecond}.Run(context.Background(), Command{
			Args:        []string{"bash", "-c", stubbornScript(pidFile, false)},
			WallTimeout: 30 * time.Second * scale,
			IdleTimeout: idle,
		})
		child, started := readPIDFile(t, pidFile)
		if !started && ex.Idle && scale != loadScales[len(loadScales)-1] {
			t.Logf("idle timeout %s ran out before the script started its child; longer timers", idle)
			continue
		}
		if !started {
			t.Fatalf("the script never started its child: %+v", ex)
		}
		if !ex.Idle || ex.TimedOut {
			t.Fatalf("want idle timeout, got %+v", ex)
		}
		if ex.Duration > 10*time.Second*scale {
			t.Errorf("idle kill took %s", ex.Duration)
		}
		if !strings.Contains(ex.Detail, "without output") {
			t.Errorf("detail: %q", ex.Detail)
		}
		if alive(child) {
			t.Fatalf("child %d survived the idle kill", child)
		}
		return
	}
}

// stampWriter records when each chunk of output reached it; the copier
// hands output on right after marking it for the idle timer.
type stampWriter struct {
	mu    sync.Mutex
	times []time.Time
}

func (w *stampWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.times = append(w.times, time.Now())
	return len(p), nil
}

// longestSilence is the longest stretch between start, the writes and end.
func (w *stampWriter) longestSilence(start, end time.Time) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	var longest time.Duration
	prev := start
	for _, at := range append(w.times, end) {
		longest = max(longest, at.Sub(prev))
		prev = at
	}
	return longest
}

func TestLocalOutputKeepsIdleTimerAlive(t *testing.T) {
	// 20 lines, one every idle/6: the run lasts over 3 idle timeouts and
	// ends normally only if each line restarts the idle timer. Under load a
	// real silence of a whole idle timeout can open between two lines; that
	// kill is right and the run is tried again with longer timers. An idle
	// kill without such a silence is the bug this test catches.
	for _, scale := range loadScales {
		idle := 300 * time.Millisecond * scale
		var w stampWriter
		start := time.Now()
		// A short grace keeps the kill's own time out of the silence below.
		ex, err := Local{KillGrace: 10 * time.Millisecond}.Run(context.Background(), Command{
			Args:        []string{"bash", "-c", fmt.Sprintf("for i in $(seq 20); do echo $i; sleep %.3f; done; exit 3", (idle / 6).Seconds())},
			Stdout:      &w,
			IdleTimeout: idle,
			WallTimeout: 60 * time.Second * scale,
		})
		if err != nil {
			t.Fatal(err)
		}
		if !ex.Idle && !ex.TimedOut && ex.Code == 3 {
			if ex.Duration < 2*idle {
				t.Fatalf("the run took %s, too short to outlast the idle timeout %s", ex.Duration, idle)
			}
			return
		}
		// Allow for the moment between marking output and handing it on.
		silence := w.longestSilence(start, time.Now())
		if !ex.Idle || silence < idle*9/10 {
			t.Fatalf("want a normal exit 3 (longest silence %s, idle timeout %s), got %+v", silence, idle, ex)
		}
		t.Logf("idle timeout %s: killed after a real silence of %s (a loaded machine); longer timers", idle, silence)
	}
	t.Fatal("a real silence of a whole idle timeout opened at every timer scale")
}

func TestLocalCancelKillsGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Exit, 1)
	go func() {
		ex, _ := Local{KillGrace: 200 * time.Millisecond}.Run(ctx, Command{Args: []string{"bash", "-c", stubbornScript(pidFile, false)}})
		done <- ex
	}()
	child := waitPIDFile(t, pidFile)
	cancel()
	ex := <-done
	if ex.TimedOut || ex.Idle || !strings.HasPrefix(ex.Detail, "cancelled") {
		t.Fatalf("want cancelled, got %+v", ex)
	}
	if alive(child) {
		t.Fatalf("child %d survived cancel", child)
	}
}

func TestLocalEnvironmentIsExactlyCommandEnvPlusPath(t *testing.T) {
	t.Setenv("HOH_LOCAL_TEST_LEAK", "leaked")
	var out bytes.Buffer
	ex, err := Local{}.Run(context.Background(), Command{
		Args:   []string{"sh", "-c", "env; pwd"},
		Env:    []string{"ONLY=this"},
		Dir:    "/",
		Stdout: &out,
	})
	if err != nil || ex.Code != 0 {
		t.Fatalf("run: %v %+v", err, ex)
	}
	got := out.String()
	if strings.Contains(got, "HOH_LOCAL_TEST_LEAK") {
		t.Errorf("host environment leaked: %s", got)
	}
	if !strings.Contains(got, "ONLY=this") || !strings.Contains(got, "PATH=") {
		t.Errorf("env missing ONLY or PATH: %s", got)
	}
	if !strings.HasSuffix(strings.TrimSpace(got), "\n/") && strings.TrimSpace(got) != "/" && !strings.Contains(got, "\n/\n") {
		t.Errorf("working directory not applied: %s", got)
	}
}

func TestLocalExitCodesAndLeftoversAfterNormalExit(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "bg.pid")
	ex, err := Local{}.Run(context.Background(), Command{
		Args: []string{"bash", "-c", "sleep 300 & echo $! > " + pidFile + "; exit 7"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if ex.Code != 7 || ex.TimedOut || ex.Idle {
		t.Fatalf("want exit 7, got %+v", ex)
	}
	pid := waitPIDFile(t, pidFile)
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(pid) {
		t.Fatalf("background job %d outlived its group leader", pid)
	}
}

func TestLocalMissingBinaryIsAnError(t *testing.T) {
	ex, err := Local{}.Run(context.Background(), Command{Args: []string{"/nonexistent/hoh-binary"}})
	if err == nil || ex.Code != -1 {
		t.Fatalf("want an error and code -1, got %v %+v", err, ex)
	}
}

// overlapWriter counts Write calls that began while another was running.
type overlapWriter struct {
	inFlight, overlaps atomic.Int32
	mu                 sync.Mutex
	n                  int
}

func (w *overlapWriter) Write(p []byte) (int, error) {
	if w.inFlight.Add(1) > 1 {
		w.overlaps.Add(1)
	}
	defer w.inFlight.Add(-1)
	time.Sleep(100 * time.Microsecond) // widens the window a second copier would hit
	w.mu.Lock()
	w.n += len(p)
	w.mu.Unlock()
	return len(p), nil
}

// One writer for both streams (a bytes.Buffer in most callers) must never
// be written by the two copiers at once: that is a data race on it.
func TestLocalNeverWritesASharedWriterConcurrently(t *testing.T) {
	w := &overlapWriter{}
	ex, err := Local{}.Run(context.Background(), Command{
		Args:   []string{"bash", "-c", `for i in $(seq 3000); do echo "out $i"; echo "err $i" >&2; done`},
		Stdout: w, Stderr: w,
	})
	if err != nil || ex.Code != 0 {
		t.Fatalf("run: %v %+v", err, ex)
	}
	want := 0
	for i := 1; i <= 3000; i++ {
		want += 2 * len(fmt.Sprintf("out %d\n", i))
	}
	if w.n != want {
		t.Errorf("copied %d bytes, want %d", w.n, want)
	}
	if o := w.overlaps.Load(); o > 0 {
		t.Errorf("%d writes to the shared writer overlapped another", o)
	}
}
