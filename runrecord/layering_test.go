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

// viewerAdapters are the adapter packages analysis/viewer still imports for
// record types that live there (harness.Result and ToolCall in result.json,
// benchmark.Evaluation in cp-N.json, benchmark.CheckResult): the one
// exception, until those types move here. No other analysis package may
// need an adapter (the reporting table is runrecord's for that reason).
var viewerAdapters = map[string]bool{module + "adapters/benchmark": true, module + "adapters/harness": true}

// The analysis reads records without linking the adapters (no Docker
// client, no CLI catalogue in hoh report's dependencies).
func TestAnalysisImportsNoAdapter(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}|{{join .Imports " "}}|{{join .Deps " "}}`, "./analysis/...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./analysis/...: %v", err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.SplitN(line, "|", 3)
		if len(parts) != 3 {
			continue
		}
		n++
		pkg, imports, deps := parts[0], strings.Fields(parts[1]), strings.Fields(parts[2])
		if pkg == module+"analysis/viewer" {
			for _, d := range imports {
				if strings.HasPrefix(d, module+"adapters/") && !viewerAdapters[d] {
					t.Errorf("%s imports %s: the analysis reads records through runrecord, not the adapters", pkg, d)
				}
			}
			continue
		}
		for _, d := range deps {
			if strings.HasPrefix(d, module+"adapters/") {
				t.Errorf("%s depends on %s: the analysis reads records through runrecord, not the adapters", pkg, d)
			}
		}
	}
	if n < 5 {
		t.Fatalf("go list ./analysis/... listed %d packages", n)
	}
}
