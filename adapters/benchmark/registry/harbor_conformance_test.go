package registry

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/benchmark/conformance"
)

// writeTask writes a Harbor task folder; files maps relative paths to content.
func writeTask(t *testing.T, root, id string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, id, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func complete(toml string) map[string]string {
	return map[string]string{
		"task.toml":              toml,
		"instruction.md":         "Write answer.txt.\n",
		"environment/Dockerfile": "FROM scratch\n",
		"tests/test.sh":          "echo 1 > /logs/verifier/reward.txt\n",
		"solution/solve.sh":      "echo 42 > answer.txt\n",
	}
}

func problemsFor(r conformance.Report, task string) []conformance.Problem {
	var out []conformance.Problem
	for _, p := range r.Problems {
		if p.Task == task {
			out = append(out, p)
		}
	}
	return out
}

func hasProblem(ps []conformance.Problem, sev conformance.Severity, pathSuffix, msg string) bool {
	for _, p := range ps {
		if p.Severity == sev && strings.HasSuffix(p.Path, pathSuffix) && strings.Contains(p.Message, msg) {
			return true
		}
	}
	return false
}

func TestHarborSyntheticDataset(t *testing.T) {
	root := t.TempDir()
	writeTask(t, root, "v10", complete("version = \"1.0\"\n[environment]\nallow_internet = false\n"))
	writeTask(t, root, "v11", complete("schema_version = \"1.1\"\n[environment]\nallow_internet = false\n"))
	writeTask(t, root, "v12-image", map[string]string{
		"task.toml":      "schema_version = \"1.2\"\n[environment]\ndocker_image = \"busybox:local\"\nallow_internet = false\n",
		"instruction.md": "x\n", "tests/test.sh": "true\n", "solution/solve.sh": "true\n",
	})
	gpu := complete("schema_version = \"1.2\"\n[environment]\ngpus = 1\nallow_internet = true\n")
	writeTask(t, root, "needs-gpu", gpu)
	bare := complete("schema_version = \"1.2\"\n[environment]\nallow_internet = false\n")
	delete(bare, "tests/test.sh")
	delete(bare, "environment/Dockerfile")
	delete(bare, "solution/solve.sh")
	writeTask(t, root, "missing-files", bare)
	writeTask(t, root, "unknown-field", complete("schema_version = \"1.2\"\n[environment]\ncpu_count = 2\n"))
	writeTask(t, root, "bad-version", complete("version = \"2.0\"\n"))
	writeTask(t, root, "syntax", complete("schema_version = \"1.2\"\n[agent]\ntimeout_sec = = 1\n"))
	noInstr := complete("schema_version = \"1.2\"\n")
	delete(noInstr, "instruction.md")
	writeTask(t, root, "no-instruction", noInstr)

	r, err := CheckHost("harbor", root, conformance.Host{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	r.WriteText(&buf)
	t.Log(buf.String())
	if len(r.Tasks) != 7 {
		t.Errorf("loaded %d tasks, want 7 (v10, v11, v12-image, needs-gpu, missing-files, unknown-field, bad-version)", len(r.Tasks))
	}
	for _, id := range []string{"v10", "v11", "v12-image"} {
		if ps := problemsFor(r, id); len(ps) != 0 {
			t.Errorf("%s: unexpected problems %v", id, ps)
		}
	}
	ps := problemsFor(r, "missing-files")
	if !hasProblem(ps, conformance.Error, "tests/test.sh", "missing") || !hasProblem(ps, conformance.Error, "environment/Dockerfile", "missing") ||
		!hasProblem(ps, conformance.Warning, "solution/solve.sh", "oracle") {
		t.Errorf("missing-files: %v", ps)
	}
	ps = problemsFor(r, "needs-gpu")
	if !hasProblem(ps, conformance.Error, "task.toml", "needs 1 GPU") || !hasProblem(ps, conformance.Warning, "task.toml", "allow_internet") {
		t.Errorf("needs-gpu: %v", ps)
	}
	// Harbor ignores unknown keys and never validates the version string:
	// both load, with a warning naming the key.
	if ps := problemsFor(r, "unknown-field"); !hasProblem(ps, conformance.Warning, "task.toml", "unknown key environment.cpu_count") {
		t.Errorf("unknown-field: %v", ps)
	}
	if ps := problemsFor(r, "bad-version"); !hasProblem(ps, conformance.Warning, "task.toml", `version "2.0"`) {
		t.Errorf("bad-version: %v", ps)
	}
	ps = problemsFor(r, "syntax")
	if len(ps) != 1 || ps[0].Line != 3 {
		t.Errorf("syntax error must carry its line (3): %v", ps)
	}
	if ps := problemsFor(r, "no-instruction"); !hasProblem(ps, conformance.Error, "task.toml", "instruction.md") {
		t.Errorf("no-instruction: %v", ps)
	}
	if r.OK() {
		t.Error("a dataset with errors reported OK")
	}

	// A host with a GPU and internet clears the host problems of needs-gpu.
	r, _ = CheckHost("harbor", root, conformance.Host{GPUs: 1, Internet: true})
	if ps := problemsFor(r, "needs-gpu"); len(ps) != 0 {
		t.Errorf("needs-gpu on a capable host: %v", ps)
	}
	// List loads per task: the broken task.toml files are left out, the
	// rest list.
	if tasks, err := List("harbor", root); err != nil || len(tasks) != 7 {
		t.Errorf("List of a dataset with broken tasks: %d tasks, %v (want the 7 that load)", len(tasks), err)
	}
	clean := t.TempDir()
	writeTask(t, clean, "v10", complete("version = \"1.0\"\n[environment]\nallow_internet = false\ncpus = 2\n"))
	tasks, err := List("harbor", clean)
	if err != nil || len(tasks) != 1 || tasks[0].Limits.CPUs != 2 || tasks[0].Limits.AllowInternet {
		t.Fatalf("list: %+v %v", tasks, err)
	}
	r, _ = CheckHost("harbor", clean, conformance.Host{})
	if !r.OK() || r.Count(conformance.Warning) != 0 {
		t.Errorf("clean dataset: %+v", r.Problems)
	}
}

// The committed Harbor test fixtures are a valid dataset.
func TestHarborFixturesConform(t *testing.T) {
	r, err := CheckHost("harbor", "../harbor/testdata/tasks", conformance.Host{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || len(r.Tasks) != 3 {
		var buf bytes.Buffer
		r.WriteText(&buf)
		t.Fatalf("fixtures:\n%s", buf.String())
	}
}

// GameCraft-Bench is a Harbor dataset (schema 1.2). The shared copy is the
// whole upstream checkout without the oracle solutions: every folder under
// tasks/ (the 140 tasks and upstream's example template, which is a valid
// Harbor task) loads and is runnable; only solution/solve.sh is reported
// missing, as a warning.
func TestRealGamecraftAsHarbor(t *testing.T) {
	root := shared(t, "gamecraft-bench")
	r, err := CheckHost("harbor", root, conformance.Host{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Tasks) != 141 {
		t.Fatalf("loaded %d tasks, want 140 and the example", len(r.Tasks))
	}
	var solution int
	for _, p := range r.Problems {
		switch {
		case p.Severity == conformance.Warning && strings.HasSuffix(p.Path, "solution/solve.sh"):
			solution++
		case p.Severity == conformance.Error:
			t.Errorf("unexpected error: %s", p)
		}
	}
	if solution != 141 {
		t.Errorf("%d missing solve.sh warnings, want 141", solution)
	}
	tasks, err := List("harbor", root)
	if err != nil || len(tasks) != 141 {
		t.Fatalf("list: %d tasks, %v", len(tasks), err)
	}
	for _, x := range tasks {
		if x.ID == "platformer-paper-kite" || strings.HasPrefix(x.ID, "cardgame-") {
			if x.Limits.AgentTimeout.Seconds() <= 0 || x.Spec == "" {
				t.Errorf("%s: %+v", x.ID, x.Limits)
			}
		}
	}
}
