package cliinstall_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/harness/cliinstall"
	"github.com/hoh-research/hoh/adapters/sandbox"
)

// A CLI installed under /tmp (which every role's view hides), reached
// through a symlinked tools directory in a folder with a space, runs in a
// confined view whose Tools are its ViewPaths, even when the command is a
// wrapper that starts it (the view derives only the command's own install);
// without them it cannot be found. This is what made every role of a
// checkout under /tmp exit 127.
func TestACLIUnderAHiddenDirectoryRunsWithItsViewPaths(t *testing.T) {
	root, err := os.MkdirTemp("/tmp", "hoh-cli view-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	pkg := filepath.Join(root, "real", "fake-cli@1.0.0")
	bin := filepath.Join(pkg, "node_modules", ".bin")
	if err := os.MkdirAll(filepath.Join(pkg, "node_modules", "fake-cli"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(bin, 0o755)
	script := filepath.Join(pkg, "node_modules", "fake-cli", "cli.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho cli-ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../fake-cli/cli.sh", filepath.Join(bin, "fake-cli")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "real"), filepath.Join(root, "tools")); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(root, "tools", "fake-cli@1.0.0", "node_modules", ".bin", "fake-cli")
	paths := cliinstall.ViewPaths(exe)
	if len(paths) == 0 || paths[0] != filepath.Join(root, "tools", "fake-cli@1.0.0") {
		t.Fatalf("ViewPaths(%s) = %v, want the install directory first", exe, paths)
	}
	work := t.TempDir()
	run := func(v sandbox.View) (string, int) {
		var out bytes.Buffer
		ex, err := sandbox.Confined{Inner: sandbox.Local{}, View: v}.Run(context.Background(),
			sandbox.Command{Args: []string{"/bin/sh", "-c", `exec "$0"`, exe}, Dir: "/", Stdout: &out, Stderr: &out, WallTimeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		return out.String(), ex.Code
	}
	hidden := []string{"/tmp", work}
	if out, code := run(sandbox.View{Hide: hidden}); code == 0 || strings.Contains(out, "cli-ran") {
		t.Fatalf("the hidden CLI ran without Tools (exit %d): %s", code, out)
	}
	out, code := run(sandbox.View{Hide: hidden, Tools: paths})
	if code != 0 || !strings.Contains(out, "cli-ran") {
		t.Fatalf("exit %d with Tools %v: %s", code, paths, out)
	}
}
