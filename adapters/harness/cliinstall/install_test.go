package cliinstall

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeNPM is an npm that "installs" pkg@version by writing its package.json
// (with a node-script bin and engines.node from $FAKE_ENGINES; the version
// $FAKE_VERSION when set, as a registry resolving a pin elsewhere would) and
// counts its calls in $FAKE_LOG; a package named broken fails.
const fakeNPM = `#!/bin/sh
echo "$*" >>"$FAKE_LOG"
mkdir -p "${XDG_CONFIG_HOME:-$HOME/.config}/cli" "${XDG_DATA_HOME:-$HOME/.local/share}/cli" # as a postinstall starting its CLI would
prefix="$3"; pin="$(eval echo \${$#})"
name="${pin%@*}"; version="${FAKE_VERSION:-${pin##*@}}"
case "$name" in broken) echo "npm ERR! 404" >&2; exit 1;; esac
sleep "${FAKE_SLEEP:-0}"
mkdir -p "$prefix/node_modules/$name/bin" "$prefix/node_modules/.bin"
if [ "$name" = node ]; then
  printf '#!/bin/sh\necho v%s\n' "$version" >"$prefix/node_modules/.bin/node"; chmod +x "$prefix/node_modules/.bin/node"
fi
printf '{"name":"%s","version":"%s","bin":{"x":"bin/x.js"},"engines":{"node":"%s"}}' "$name" "$version" "$FAKE_ENGINES" >"$prefix/node_modules/$name/package.json"
printf '#!/usr/bin/env node\n' >"$prefix/node_modules/$name/bin/x.js"; chmod +x "$prefix/node_modules/$name/bin/x.js"
`

func fakeTools(t *testing.T, engines string) (Installer, string) {
	dir := t.TempDir()
	npm := filepath.Join(dir, "npm")
	node := filepath.Join(dir, "node")
	os.WriteFile(npm, []byte(fakeNPM), 0o755)
	os.WriteFile(node, []byte("#!/bin/sh\necho v20.20.2\n"), 0o755)
	log := filepath.Join(dir, "npm.log")
	t.Setenv("FAKE_LOG", log)
	t.Setenv("FAKE_ENGINES", engines)
	for _, v := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"} {
		t.Setenv(v, t.TempDir()) // the user's: must stay empty
	}
	return Installer{Dir: filepath.Join(dir, "tools"), NPM: npm, Node: node}, log
}

func calls(t *testing.T, log string) []string {
	data, _ := os.ReadFile(log)
	return strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(data)), "\n", " | "))
}

// Each pin lands in its own directory, verified; a second install does
// nothing; a package wanting a newer Node gets one beside it.
func TestInstallerInstallsSideBySideOnceEach(t *testing.T) {
	in, log := fakeTools(t, ">=22.5")
	pins := []string{"@scope/cli@1.0.0", "@scope/cli@2.0.0", "plain@0.3.1"}
	if err := in.Install(context.Background(), pins); err != nil {
		t.Fatal(err)
	}
	for _, p := range pins {
		name, v, _ := SplitPin(p)
		if got, err := packageVersion(filepath.Join(in.Dir, p), name); err != nil || got != v {
			t.Errorf("%s: installed %q %v", p, got, err)
		}
		if got, _ := packageVersion(filepath.Join(in.Dir, p), "node"); got != NodeRuntime {
			t.Errorf("%s: node runtime %q, want %s (engines >=22.5 on a system Node 20)", p, got, NodeRuntime)
		}
		if _, err := os.Stat(filepath.Join(in.Dir, p+".partial")); err == nil {
			t.Errorf("%s: a .partial directory was left", p)
		}
	}
	for _, home := range []string{os.Getenv("HOME"), os.Getenv("XDG_CONFIG_HOME"), os.Getenv("XDG_DATA_HOME")} {
		if entries, _ := os.ReadDir(home); len(entries) > 0 {
			t.Errorf("an install script's state landed in the user's %s: %v", home, entries)
		}
	}
	first := len(calls(t, log))
	if err := in.Install(context.Background(), pins); err != nil {
		t.Fatal(err)
	}
	if again := len(calls(t, log)); again != first {
		t.Errorf("a second install ran npm again (%d calls, then %d)", first, again)
	}
}

// Two installers into one directory at once (a test beside
// scripts/install-harnesses.sh): neither deletes the other's half-done
// install, both succeed, and npm runs once per pin.
func TestConcurrentInstallersIntoOneDirectoryWaitForEachOther(t *testing.T) {
	in, log := fakeTools(t, "")
	t.Setenv("FAKE_SLEEP", "0.3")
	pins := []string{"@scope/cli@1.0.0", "plain@0.3.1"}
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- in.Install(context.Background(), pins) }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	for _, p := range pins {
		name, v, _ := SplitPin(p)
		if got, err := packageVersion(filepath.Join(in.Dir, p), name); err != nil || got != v {
			t.Errorf("%s: installed %q %v", p, got, err)
		}
	}
	installs := 0
	for _, c := range strings.Split(strings.TrimSpace(readFile(t, log)), "\n") {
		if !strings.Contains(c, "node@") {
			installs++
		}
	}
	if installs != len(pins) {
		t.Errorf("npm installed %d times for %d pins:\n%s", installs, len(pins), readFile(t, log))
	}
}

func readFile(t *testing.T, path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// An engines.node the system's Node meets gets no runtime; a failed npm
// leaves nothing that looks installed.
func TestInstallerAddsNoRuntimeWhenNotNeededAndNeverLeavesHalfInstalls(t *testing.T) {
	in, _ := fakeTools(t, ">=18")
	if err := in.Install(context.Background(), []string{"plain@1.0.0"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(in.Dir, "plain@1.0.0", "node_modules", "node")); err == nil {
		t.Error("a node runtime was added for engines >=18 on Node 20")
	}
	err := in.Install(context.Background(), []string{"broken@1.0.0"})
	if err == nil || !strings.Contains(err.Error(), "npm install broken@1.0.0") {
		t.Fatalf("a failing npm: %v", err)
	}
	if _, err := os.Stat(filepath.Join(in.Dir, "broken@1.0.0")); err == nil {
		t.Error("a failed install left broken@1.0.0 looking installed")
	}
	// npm reporting success with another version than the pin's: refused,
	// and nothing at the pin's directory for FindVersion to take.
	t.Setenv("FAKE_VERSION", "2.0.0")
	err = in.Install(context.Background(), []string{"plain@1.0.1"})
	if err == nil || !strings.Contains(err.Error(), `installed version "2.0.0"`) {
		t.Fatalf("npm installing another version: %v", err)
	}
	if _, err := os.Stat(filepath.Join(in.Dir, "plain@1.0.1")); err == nil {
		t.Error("a wrong version was left at plain@1.0.1, looking installed")
	}
}

// The lookup order: $HOH_TOOLS, the per-user directory, then the checkout
// around the working directory; the per-user directory follows
// $XDG_DATA_HOME, else $HOME.
func TestSourcesOrder(t *testing.T) {
	tools := t.TempDir()
	data := t.TempDir()
	t.Setenv("HOH_TOOLS", tools)
	t.Setenv("XDG_DATA_HOME", data)
	got := ToolsDirs()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 3 || got[0] != tools || got[1] != filepath.Join(data, "hoh", "harnesses") ||
		got[len(got)-1] != filepath.Join(root, ".tools", "harnesses") {
		t.Fatalf("ToolsDirs() = %q", got)
	}
	t.Setenv("XDG_DATA_HOME", "")
	home := t.TempDir()
	t.Setenv("HOME", home)
	if d, _ := UserDir(); d != filepath.Join(home, ".local", "share", "hoh", "harnesses") {
		t.Errorf("UserDir() = %q without XDG_DATA_HOME", d)
	}
	if d, _ := InstallDir(); d != tools {
		t.Errorf("InstallDir() = %q, want $HOH_TOOLS", d)
	}
	t.Setenv("HOH_TOOLS", "")
	if d, _ := InstallDir(); d != filepath.Join(home, ".local", "share", "hoh", "harnesses") {
		t.Errorf("InstallDir() = %q, want the per-user directory", d)
	}
	// Outside any checkout only the per-user directory is left.
	t.Chdir(t.TempDir())
	if got := ToolsDirs(); len(got) != 1 {
		t.Errorf("outside a checkout, from a test binary: ToolsDirs() = %q", got)
	}
}

// A CLI installed in the per-user directory is found from any directory,
// and a missing one names every directory looked in, quoted.
func TestFindVersionFromAnywhere(t *testing.T) {
	t.Setenv("HOH_TOOLS", "")
	data := filepath.Join(t.TempDir(), "a space")
	t.Setenv("XDG_DATA_HOME", data)
	t.Chdir(t.TempDir())
	in, _ := fakeTools(t, ">=18")
	in.Dir, _ = UserDir()
	if err := in.Install(context.Background(), []string{"fake-cli@1.2.3"}); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../fake-cli/bin/x.js", filepath.Join(in.Dir, "fake-cli@1.2.3", "node_modules", ".bin", "fake")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir())
	if p, err := FindVersion("fake-cli", "fake", "1.2.3"); err != nil || !strings.HasPrefix(p, in.Dir) {
		t.Fatalf("FindVersion = %q, %v", p, err)
	}
	_, err := FindVersion("fake-cli", "fake", "9.9.9")
	if err == nil || !strings.Contains(err.Error(), `"`+filepath.Join(in.Dir, "fake-cli@9.9.9")) {
		t.Fatalf("a missing version should name the per-user directory, quoted: %v", err)
	}
}
