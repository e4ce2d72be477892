package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// recorder stands in for a test so the helpers' failures can be asserted;
// Fatalf ends the goroutine like the real one.
type recorder struct {
	testing.TB
	errors []string
	fatal  string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func record(t *testing.T, f func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

func TestRepoRootHoldsThisModule(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(RepoRoot(t), "go.mod"))
	if err != nil || !strings.Contains(string(b), "module github.com/hoh-research/hoh\n") {
		t.Fatalf("go.mod at the root: %v %.80q", err, b)
	}
}

func TestSharedPathFailsWhenMissing(t *testing.T) {
	r := record(t, func(tb testing.TB) { SharedPath(tb, "no-such-benchmark-data") })
	if !strings.Contains(r.fatal, "no-such-benchmark-data is required (shared/ must sit beside the repository)") {
		t.Fatalf("fatal %q", r.fatal)
	}
}

func TestSharedPathIsBesideTheRepository(t *testing.T) {
	// The paper text is part of the shared data CI provides.
	p := SharedPath(t, "paper", "harness-of-harness.txt")
	if want := filepath.Join(filepath.Dir(RepoRoot(t)), "shared", "paper", "harness-of-harness.txt"); p != filepath.Clean(want) {
		t.Fatalf("SharedPath %s, want %s", p, want)
	}
}

// testenv serves every package's tests, so it must not pull in the harness
// adapters: a test of analysis code would build all of them (clienv finds
// the CLIs).
func TestTestenvBuildsNoHarnessAdapter(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./internal/testenv")
	cmd.Dir = RepoRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/hoh-research/hoh/adapters/harness/") && dep != "github.com/hoh-research/hoh/adapters/harness/cliinstall" {
			t.Errorf("internal/testenv depends on %s", dep)
		}
	}
}

func TestAssertNoSecret(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "clean.txt"), []byte("nothing here"), 0o644)
	leak := filepath.Join(dir, "sub", "leak.log")
	os.WriteFile(leak, []byte("key=sk-secret-1"), 0o644)

	r := record(t, func(tb testing.TB) { AssertNoSecret(tb, "sk-secret-1", dir) })
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], leak) {
		t.Fatalf("errors %q, want one naming %s", r.errors, leak)
	}
	if r := record(t, func(tb testing.TB) { AssertNoSecret(tb, "sk-other", dir, leak) }); len(r.errors) != 0 {
		t.Fatalf("clean files reported: %q", r.errors)
	}
	if r := record(t, func(tb testing.TB) { AssertNoSecret(tb, "sk-secret-1", t.TempDir()) }); len(r.errors) != 1 || !strings.Contains(r.errors[0], "checked nothing") {
		t.Fatalf("empty root: %q", r.errors)
	}
}

func TestHarborTaskTreeCopiesTheWholeTaskWritable(t *testing.T) {
	rel := filepath.Join("harbor-examples", "tasks", "hello-multi-step-simple")
	src := SharedPath(t, "benchmarks", "harbor-tasks", rel)
	task := HarborTaskTree(t, t.TempDir(), rel, map[string]string{"environment/Dockerfile": "FROM local\n"})
	n := 0
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		r, _ := filepath.Rel(src, p)
		st, err := os.Stat(filepath.Join(task, r))
		if err != nil {
			return err
		}
		if st.Mode().Perm()&0o644 != 0o644 {
			t.Errorf("%s: mode %v is not writable", r, st.Mode())
		}
		n++
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("copied %d files: %v", n, err)
	}
	if b, err := os.ReadFile(filepath.Join(task, "environment", "Dockerfile")); err != nil || string(b) != "FROM local\n" {
		t.Fatalf("Dockerfile not written over: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(task, "steps")); err != nil {
		t.Fatalf("steps/ not copied: %v", err)
	}
}

// A log's lines name their models whether the body is an object or a JSON
// string holding one; a line without a body or model names none.
func TestRequestModelsReadsObjectAndStringBodies(t *testing.T) {
	path := filepath.Join(t.TempDir(), "provider.jsonl")
	log := `{"body":{"model":"m1","input":[]}}
{"body":"{\"model\":\"m2\"}"}
{"path":"/v1/models"}
not json
{"body":{"stream":true}}
`
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(RequestModels(t, path), ","); got != "m1,m2" {
		t.Fatalf("models %q", got)
	}
}
