package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitPIDFile returns the pid a test script wrote to path.
func waitPIDFile(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(path)
		if err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("pid file: %v", err)
			}
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("pid file %s never written", path)
	return 0
}

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
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	var out bytes.Buffer
	done := make(chan Exit, 1)
	go func() {
		ex, err := Local{KillGrace: 200 * time.Millisecond}.Run(context.Background(), Command{
			Args:        []string{"bash", "-c", stubbornScript(pidFile, true)},
			Stdout:      &out,
			WallTimeout: 700 * time.Millisecond,
			IdleTimeout: 5 * time.Second,
		})
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		done <- ex
	}()
	child := waitPIDFile(t, pidFile)
	if !alive(child) {
		t.Fatalf("child %d not running before the timeout", child)
	}
	ex := <-done
	if !ex.TimedOut || ex.Idle {
		t.Fatalf("want wall timeout, got %+v", ex)
	}
	if ex.Code != -1 {
		t.Errorf("killed process should report code -1, got %d", ex.Code)
	}
	if alive(child) {
		t.Fatalf("child %d ignoring SIGTERM survived the timeout", child)
	}
	if !strings.Contains(out.String(), "tick") {
		t.Errorf("stdout not captured: %q", out.String())
	}
}

func TestLocalIdleTimeoutKillsSilentGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	done := make(chan Exit, 1)
	go func() {
		ex, _ := Local{KillGrace: 200 * time.Millisecond}.Run(context.Background(), Command{
			Args:        []string{"bash", "-c", stubbornScript(pidFile, false)},
			WallTimeout: 30 * time.Second,
			IdleTimeout: 400 * time.Millisecond,
		})
		done <- ex
	}()
	child := waitPIDFile(t, pidFile)
	ex := <-done
	if !ex.Idle || ex.TimedOut {
		t.Fatalf("want idle timeout, got %+v", ex)
	}
	if ex.Duration > 10*time.Second {
		t.Errorf("idle kill took %s", ex.Duration)
	}
	if !strings.Contains(ex.Detail, "without output") {
		t.Errorf("detail: %q", ex.Detail)
	}
	if alive(child) {
		t.Fatalf("child %d survived the idle kill", child)
	}
}

func TestLocalOutputKeepsIdleTimerAlive(t *testing.T) {
	// Output every 50ms for ~1s with a 300ms idle timeout: not idle.
	ex, err := Local{}.Run(context.Background(), Command{
		Args:        []string{"bash", "-c", "for i in $(seq 20); do echo $i; sleep 0.05; done; exit 3"},
		IdleTimeout: 300 * time.Millisecond,
		WallTimeout: 20 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if ex.Idle || ex.TimedOut || ex.Code != 3 {
		t.Fatalf("want a normal exit 3, got %+v", ex)
	}
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
	deadline := time.Now().Add(2 * time.Second)
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
