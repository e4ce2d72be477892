package testenv

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// What a trial runs with is built in one place (trial.NewEnv), for the
// runner, project mode and tests alike: a second composite literal of
// trial.Env is a second builder, where a field one of them sets (the
// relay's served log, say) can silently go missing from the other, and a
// test built that way would not run what production runs.
func TestTrialEnvHasOneConstructor(t *testing.T) {
	var builders []string
	forEachSourceFile(t, true, func(name string, fset *token.FileSet, f *ast.File) {
		inTrial := f.Name.Name == "trial" && filepath.Dir(name) == "experiments/trial"
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			switch typ := lit.Type.(type) {
			case *ast.SelectorExpr:
				if x, ok := typ.X.(*ast.Ident); ok && x.Name == "trial" && typ.Sel.Name == "Env" {
					builders = append(builders, fset.Position(lit.Pos()).String())
				}
			case *ast.Ident:
				if inTrial && typ.Name == "Env" {
					builders = append(builders, fset.Position(lit.Pos()).String())
				}
			}
			return true
		})
	})
	if len(builders) != 1 || !strings.Contains(builders[0], "experiments/trial/env.go") {
		t.Errorf("trial.Env is built at %v: want only trial.NewEnv (experiments/trial/env.go)", builders)
	}
}
