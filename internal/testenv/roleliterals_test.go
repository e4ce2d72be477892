package testenv

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// roleLiteralAllowed are the non-test files that may spell a role name as a
// string literal because there it is not a HoH role, with how many times.
var roleLiteralAllowed = map[string]int{
	// The one definition of the roles.
	"runrecord/roles.go": 3,
	// The timeouts' configuration keys (timeouts.planner, ...): keys of the
	// YAML a user writes, documented in docs/configuration.md.
	"experiments/config/config.go": 9,
	// OpenAI's chat message roles ("system", "developer"), a wire protocol.
	"adapters/scripted/request.go": 2,
	// Names of the scripted provider's steps (a test double) in the
	// harness conformance suites, matched by prompt text, not by role.
	"adapters/harness/harnesstest/suite.go":   3,
	"adapters/harness/harnesstest/network.go": 1,
}

// Roles are typed (runrecord.Role): a package that wrote "qa" instead of
// runrecord.RoleQA would compile whatever it misspelt and drift from the
// records. No non-test Go file spells a role as a string literal except the
// allowed ones above.
func TestNoRoleLiteralOutsideTheRoleType(t *testing.T) {
	roles := map[string]bool{"planner": true, "developer": true, "qa": true}
	found := map[string]int{}
	forEachSourceFile(t, false, func(name string, fset *token.FileSet, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if s, err := strconv.Unquote(lit.Value); err == nil && roles[s] {
				found[name]++
				if _, ok := roleLiteralAllowed[name]; !ok {
					t.Errorf("%s: role literal %s: use runrecord.Role%s (or runrecord.Roles)", fset.Position(lit.Pos()), lit.Value, constName(s))
				}
			}
			return true
		})
	})
	// An allowance that no longer matches is stale: shrink it so it cannot
	// hide a new literal.
	for name, n := range roleLiteralAllowed {
		if found[name] != n {
			t.Errorf("%s holds %d role literal(s), the allow-list says %d: update roleLiteralAllowed", name, found[name], n)
		}
	}
}

func constName(role string) string {
	if role == "qa" {
		return "QA"
	}
	return strings.ToUpper(role[:1]) + role[1:]
}

// forEachSourceFile parses each Go file git tracks in the repository
// (testdata aside, and test files unless withTests) and hands it to fn
// with its repository path.
func forEachSourceFile(t *testing.T, withTests bool, fn func(name string, fset *token.FileSet, f *ast.File)) {
	t.Helper()
	root := RepoRoot(t)
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--", "*.go").Output()
	if err != nil {
		t.Fatalf("git ls-files in %s: %v", root, err)
	}
	fset := token.NewFileSet()
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if name == "" || (!withTests && strings.HasSuffix(name, "_test.go")) || strings.Contains(name, "/testdata/") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(root, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		fn(name, fset, f)
	}
}
