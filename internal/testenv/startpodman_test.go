package testenv

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A machine whose processes are all stopped but whose /run is kept (CI runs
// on the machine a session left) holds rootless Podman state that names a
// dead pause process and dead conmons; podman then refuses every command
// with "invalid internal status" and the service never answers. The start
// script must recover, or `make test` fails before its first test. The test
// uses a user of its own so the suite's Podman service is never touched.
func TestStartPodmanRecoversAfterItsProcessesWereKilled(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test creates a user and runs Podman as it: run it as root (make test does)")
	}
	const name = "hoh-podman-killed"
	script := filepath.Join(RepoRoot(t), "scripts", "start-podman.sh")
	start := func(when string) {
		t.Helper()
		cmd := exec.Command(script)
		cmd.Env = append(os.Environ(), "HOH_PODMAN_USER="+name, "PODMAN_WAIT_SEC=30")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("start-podman.sh %s: %v\n%s", when, err, out)
		}
	}
	start("on a fresh user")
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatalf("start-podman.sh did not create %s: %v", name, err)
	}
	p := podmanOf(u)
	t.Cleanup(func() {
		// No container is left, so the next run of this test starts clean.
		_ = p.Command("/", nil, "podman", "rm", "-af", "-t", "0").Run()
		killUser(t, name)
	})

	// A running container: its conmon and the pause process's namespace are
	// what a later podman tries, and fails, to join once they are dead.
	ctxDir := filepath.Join(p.Home, "killed-test-image")
	if err := os.MkdirAll(ctxDir, 0o755); err != nil {
		t.Fatal(err)
	}
	bb, err := exec.LookPath("busybox")
	if err != nil {
		t.Fatalf("busybox (Debian's busybox-static, which make test-deps installs): %v", err)
	}
	data, err := os.ReadFile(bb)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ctxDir, "busybox"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	file := "FROM scratch\nCOPY busybox /bin/busybox\nCMD [\"/bin/busybox\", \"sleep\", \"600\"]\n"
	if err := os.WriteFile(filepath.Join(ctxDir, "Containerfile"), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	p.GiveTo(t, ctxDir)
	for _, args := range [][]string{{"build", "-q", "-t", "hoh-killed-test", "."}, {"run", "-d", "hoh-killed-test"}} {
		if out, err := p.Command(ctxDir, nil, "podman", args...).CombinedOutput(); err != nil {
			t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}

	killUser(t, name)
	start("after every process of its user was killed")
	out, err := p.Command("/", nil, "podman", "ps", "-a", "--format", "{{.Status}}").CombinedOutput()
	if err != nil {
		t.Fatalf("podman after the restart: %v\n%s", err, out)
	}
}

// killUser SIGKILLs every process of the user and waits until none is left.
func killUser(t *testing.T, name string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_ = exec.Command("pkill", "-9", "-u", name).Run()
		// A zombie waits for init to reap it; it holds nothing podman joins.
		out, _ := exec.Command("ps", "-u", name, "-o", "stat=").Output()
		alive := false
		for _, stat := range strings.Fields(string(out)) {
			alive = alive || !strings.HasPrefix(stat, "Z")
		}
		if !alive {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes of %s outlived SIGKILL for 30s", name)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
