// Package testenv holds the test set-up that many packages' tests share:
// the repository root, the shared data beside it and the check that a
// secret reached no file (the installed CLIs: clienv). Imported only by
// tests; a missing prerequisite fails the test, never skips it.
package testenv

import (
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/harness/cliinstall"
	"github.com/hoh-research/hoh/internal/fstree"
	"github.com/hoh-research/hoh/runrecord"
)

// RepoRoot is the directory holding go.mod above the test's working
// directory.
func RepoRoot(t testing.TB) string {
	t.Helper()
	root, err := cliinstall.RepoRoot()
	if err != nil {
		t.Fatalf("repository root: %v", err)
	}
	return root
}

// BuildHoh builds the hoh command into the test's temporary directory and
// returns its path: for tests that run hoh as a user does.
func BuildHoh(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hoh")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/hoh")
	cmd.Dir = RepoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/hoh: %v\n%s", err, out)
	}
	return bin
}

// SharedPath is ../shared/<parts...> beside the repository (the read-only
// reference data CI places there); the test fails when it does not exist.
func SharedPath(t testing.TB, parts ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{RepoRoot(t), "..", "shared"}, parts...)...)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("shared data %s is required (shared/ must sit beside the repository): %v", p, err)
	}
	return p
}

// AssertNoSecret fails the test for every regular file under roots (files
// or directories) that contains secret, and when roots hold no file at all,
// since then the check would have checked nothing.
func AssertNoSecret(t testing.TB, secret string, roots ...string) {
	t.Helper()
	files := 0
	for _, root := range roots {
		_ = filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
			if err != nil || !info.Mode().IsRegular() {
				return nil
			}
			files++
			if b, _ := os.ReadFile(p); strings.Contains(string(b), secret) {
				t.Errorf("secret value written to %s", p)
			}
			return nil
		})
	}
	if files == 0 {
		t.Errorf("no files under %v: the secret check checked nothing", roots)
	}
}

// AssertSQLiteIntact runs sqlite3's integrity check on every SQLite
// database under roots (a CLI's state after hoh scrubbed the key from it)
// and returns how many it checked.
func AssertSQLiteIntact(t testing.TB, roots ...string) int {
	t.Helper()
	sqlite, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Fatal("sqlite3 is required (scripts/install-test-deps.sh installs it)")
	}
	n := 0
	for _, root := range roots {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			f, err := os.Open(p)
			if err != nil {
				return nil
			}
			head := make([]byte, 16)
			_, rerr := io.ReadFull(f, head)
			f.Close()
			if rerr != nil || string(head) != "SQLite format 3\x00" {
				return nil
			}
			n++
			if res, err := exec.Command(sqlite, "-readonly", p, "PRAGMA integrity_check;").CombinedOutput(); err != nil || strings.TrimSpace(string(res)) != "ok" {
				t.Errorf("%s: integrity check: %v %s", p, err, res)
			}
			return nil
		})
	}
	return n
}

// AssertServedAccounted fails the test unless every token hoh's relay saw
// served to the trial in trialDir (served.jsonl) is in its ledger
// (usage.jsonl, valid attempts) or among its replaced and killed attempts
// (usage-replaced.jsonl), exactly. It returns the relay's lines and the
// replaced and killed attempts' lines.
func AssertServedAccounted(t testing.TB, trialDir string) ([]runrecord.ServedLine, []runrecord.LedgerLine) {
	t.Helper()
	l := runrecord.TrialLayout{Dir: trialDir}
	lines, relayed, err := runrecord.ReadServed(l.Served())
	if err != nil {
		t.Fatal(err)
	}
	ledger, err := runrecord.LedgerUsage(l.Usage())
	if err != nil {
		t.Fatal(err)
	}
	others, _, err := runrecord.ReadLedgerTolerant(l.ReplacedUsage())
	if err != nil {
		t.Fatal(err)
	}
	var spent int64
	for _, o := range others {
		spent += o.Usage.Total
	}
	if relayed.Total != ledger.Total+spent {
		t.Errorf("%s: the relay saw %d tokens served, ledger %d + replaced/killed %d", trialDir, relayed.Total, ledger.Total, spent)
	}
	return lines, others
}

// HarborTask copies the real Harbor task ../shared/benchmarks/harbor-tasks/
// <rel> into dir/<base of rel> as tests use it: its task.toml with the
// old/new string pairs of replace applied (a local image for the one it
// names, added settings) and its instruction.md; tests/test.sh is testSh.
// It returns the task folder.
func HarborTask(t testing.TB, dir, rel, testSh string, replace ...string) string {
	t.Helper()
	src := SharedPath(t, "benchmarks", "harbor-tasks", rel)
	toml, err := os.ReadFile(filepath.Join(src, "task.toml"))
	if err != nil {
		t.Fatal(err)
	}
	instr, err := os.ReadFile(filepath.Join(src, "instruction.md"))
	if err != nil {
		t.Fatal(err)
	}
	task := filepath.Join(dir, filepath.Base(rel))
	for p, body := range map[string]string{
		"task.toml": strings.NewReplacer(replace...).Replace(string(toml)), "instruction.md": string(instr), "tests/test.sh": testSh,
	} {
		p = filepath.Join(task, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return task
}

// HarborTaskTree copies the whole real Harbor task folder ../shared/
// benchmarks/harbor-tasks/<rel> (its steps/ included) into dir/<base of
// rel> and writes files over it (relative path -> content; the local image
// for one it names, say). It returns the task folder.
func HarborTaskTree(t testing.TB, dir, rel string, files map[string]string) string {
	t.Helper()
	src := SharedPath(t, "benchmarks", "harbor-tasks", rel)
	task := filepath.Join(dir, filepath.Base(rel))
	// Writable, whatever the shared copy's modes (it is read-only).
	err := fstree.Copy(src, task, fstree.Options{DirBits: 0o755, FileBits: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	for r, body := range files {
		p := filepath.Join(task, r)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return task
}

// Slurm fails the test unless a Slurm cluster answers here with a node
// that takes jobs (scripts/start-slurm.sh starts a one-node test cluster;
// scripts/install-test-deps.sh installs and starts it).
func Slurm(t testing.TB) {
	t.Helper()
	for _, bin := range []string{"sbatch", "squeue", "scancel", "sinfo"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("Slurm is required for this test (scripts/install-test-deps.sh installs slurm-wlm and starts a one-node cluster): %v", err)
		}
	}
	out, err := exec.Command("sinfo", "-h", "-o", "%t").CombinedOutput()
	state := strings.TrimSpace(string(out))
	if err != nil || !(strings.HasPrefix(state, "idle") || strings.HasPrefix(state, "mix") || strings.HasPrefix(state, "alloc")) {
		t.Fatalf("a Slurm node that takes jobs is required for this test (scripts/start-slurm.sh starts one): sinfo: %v %q", err, state)
	}
}

// Podman is the rootless Podman service of an unprivileged user that
// scripts/start-podman.sh starts.
type Podman struct {
	User, Home, Runtime string
	UID, GID            int
	Host                string // DOCKER_HOST of its Docker-compatible socket
}

// PodmanUser is the user scripts/start-podman.sh creates (HOH_PODMAN_USER).
func PodmanUser() string {
	if u := os.Getenv("HOH_PODMAN_USER"); u != "" {
		return u
	}
	return "hoh-podman"
}

// RootlessPodman fails the test unless this process is root (it runs
// commands as the user) and the user's rootless Podman service answers
// (scripts/start-podman.sh; scripts/install-test-deps.sh runs it).
func RootlessPodman(t testing.TB) Podman {
	t.Helper()
	const fix = "scripts/start-podman.sh starts it; scripts/install-test-deps.sh installs podman and runs that"
	if os.Geteuid() != 0 {
		t.Fatalf("rootless Podman test: must run as root to run commands as %s (%s)", PodmanUser(), fix)
	}
	u, err := user.Lookup(PodmanUser())
	if err != nil {
		t.Fatalf("rootless Podman is required for this test: user %s: %v (%s)", PodmanUser(), err, fix)
	}
	p := podmanOf(u)
	sock := strings.TrimPrefix(p.Host, "unix://")
	out, err := exec.Command("curl", "-s", "--max-time", "5", "--unix-socket", sock, "http://d/_ping").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "OK" {
		t.Fatalf("rootless Podman is required for this test: its service does not answer on %s: %v %q (%s)", sock, err, out, fix)
	}
	return p
}

// podmanOf is the rootless Podman service start-podman.sh runs as u.
func podmanOf(u *user.User) Podman {
	p := Podman{User: u.Username, Home: u.HomeDir, Runtime: filepath.Join("/run/user", u.Uid)}
	p.UID, _ = strconv.Atoi(u.Uid)
	p.GID, _ = strconv.Atoi(u.Gid)
	p.Host = "unix://" + filepath.Join(p.Runtime, "podman", "podman.sock")
	return p
}

// Command is name args run as the Podman user with a clean environment:
// HOME, XDG_RUNTIME_DIR, DOCKER_HOST at the user's socket, and env.
func (p Podman) Command(dir string, env []string, name string, args ...string) *exec.Cmd {
	base := []string{"-u", p.User, "--", "env", "-i", "HOME=" + p.Home, "USER=" + p.User, "LOGNAME=" + p.User,
		"XDG_RUNTIME_DIR=" + p.Runtime, "DOCKER_HOST=" + p.Host, "PATH=/usr/local/bin:/usr/bin:/bin"}
	cmd := exec.Command("runuser", append(append(append(base, env...), name), args...)...)
	cmd.Dir = dir
	return cmd
}

// GiveTo makes root (a tree) the Podman user's.
func (p Podman) GiveTo(t testing.TB, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, p.UID, p.GID)
	})
	if err != nil {
		t.Fatal(err)
	}
}
