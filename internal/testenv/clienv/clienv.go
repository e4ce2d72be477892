// Package clienv finds the installed harness CLIs for tests. It lives apart
// from testenv because it needs the harness catalogue: a test that needs no
// CLI does not build every harness adapter. Imported only by tests; a
// missing CLI fails the test, never skips it.
package clienv

import (
	"testing"

	"github.com/hoh-research/hoh/adapters/harness/catalogue"
	"github.com/hoh-research/hoh/adapters/harness/cliinstall"
)

// CLI is the path of the installed harness CLI executable name ("codex",
// "claude", "opencode", "pi") at its default pin; the test fails, naming
// the CLI as the catalogue does, when it is not installed.
func CLI(t testing.TB, name string) string {
	t.Helper()
	return CLIAt(t, name, "")
}

// CLIAt is CLI at version (empty: the default pin).
func CLIAt(t testing.TB, name, version string) string {
	t.Helper()
	cli, ok := catalogue.ByExecutable(name)
	if !ok {
		t.Fatalf("%s is not an executable of the harness catalogue", name)
	}
	if version == "" {
		version = cli.Pin()
	}
	bin, err := cliinstall.FindVersion(cli.Package, name, version)
	if err != nil {
		t.Fatalf("the %s %s is required for this test (run scripts/install-harnesses.sh): %v", cli.Display, version, err)
	}
	return bin
}
