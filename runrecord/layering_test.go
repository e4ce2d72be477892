package runrecord

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/hoh-research/hoh/"

// deps maps each package matching pattern to its transitive imports (test
// files excluded: a test may read what it wrote with the analysis).
func deps(t *testing.T, pattern string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, pattern)
	cmd.Dir = ".." // the module root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pattern, err)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 {
			m[f[0]] = f[1:]
		}
	}
	if len(m) == 0 {
		t.Fatalf("go list %s: no packages", pattern)
	}
	return m
}

// The record is the layer below experiments and analysis: experiments must
// not need analysis for its schema, and the record needs nothing of hoh.
func TestLayering(t *testing.T) {
	for pkg, ds := range deps(t, "./experiments/...") {
		for _, d := range ds {
			if strings.HasPrefix(d, module+"analysis/") {
				t.Errorf("%s imports %s: experiments must not depend on analysis (shared schemas belong in runrecord)", pkg, d)
			}
		}
	}
	for pkg, ds := range deps(t, "./runrecord") {
		for _, d := range ds {
			if strings.HasPrefix(d, module) {
				t.Errorf("%s imports %s: runrecord must stay below every other package", pkg, d)
			}
		}
	}
}
