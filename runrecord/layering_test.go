package runrecord

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/hoh-research/hoh/"

// deps maps each package matching pattern, and each of its test binaries
// (go list -test), to its transitive imports: a test that reads what
// experiments wrote with the analysis belongs above both (cmd).
func deps(t *testing.T, pattern string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-test", "-f", `{{.ImportPath}}|{{join .Deps " "}}`, pattern)
	cmd.Dir = ".." // the module root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pattern, err)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if pkg, ds, ok := strings.Cut(line, "|"); ok {
			m[pkg] = strings.Fields(ds)
		}
	}
	if len(m) == 0 {
		t.Fatalf("go list %s: no packages", pattern)
	}
	return m
}

// The record is the layer below experiments and analysis: neither needs the
// other for a schema (experiments writes through runrecord, the analysis
// reads through it), tests included, and the record needs nothing of hoh.
func TestLayering(t *testing.T) {
	for _, l := range []struct{ from, to string }{{"experiments", "analysis"}, {"analysis", "experiments"}} {
		for pkg, ds := range deps(t, "./"+l.from+"/...") {
			for _, d := range ds {
				if strings.HasPrefix(d, module+l.to+"/") {
					t.Errorf("%s imports %s: %s must not depend on %s (shared records belong in runrecord)", pkg, d, l.from, l.to)
				}
			}
		}
	}
	for pkg, ds := range deps(t, "./runrecord") {
		for _, d := range ds {
			if strings.HasPrefix(d, module) && d != module+"runrecord" {
				t.Errorf("%s imports %s: runrecord must stay below every other package", pkg, d)
			}
		}
	}
}

// The analysis reads records without linking the adapters (no Docker
// client, no CLI catalogue in hoh report's dependencies): no analysis
// package depends on one, and no analysis test imports one either.
func TestAnalysisImportsNoAdapter(t *testing.T) {
	n := 0
	for pkg, ds := range list(t, "{{join .Deps \" \"}}", "./analysis/...") {
		n++
		for _, d := range ds {
			if strings.HasPrefix(d, module+"adapters/") {
				t.Errorf("%s depends on %s: the analysis reads records through runrecord, not the adapters", pkg, d)
			}
		}
	}
	if n < 5 {
		t.Fatalf("go list ./analysis/... listed %d packages", n)
	}
	for pkg, imports := range list(t, "{{join .Imports \" \"}}", "-test", "./analysis/...") {
		for _, d := range imports {
			if strings.HasPrefix(d, module+"adapters/") {
				t.Errorf("%s imports %s: the analysis reads records through runrecord, not the adapters", pkg, d)
			}
		}
	}
}

// list maps each package go list names to the fields of format.
func list(t *testing.T, format string, args ...string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-f", "{{.ImportPath}}|" + format}, args...)...)
	cmd.Dir = ".." // the module root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if pkg, fields, ok := strings.Cut(line, "|"); ok {
			m[pkg] = strings.Fields(fields)
		}
	}
	return m
}
