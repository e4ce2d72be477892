package cliinstall

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeInstall lays out an npm install of version 1.2.3 under a new
// $HOH_TOOLS and returns its bin directory.
func fakeInstall(t *testing.T) string {
	tools := t.TempDir()
	pkg := filepath.Join(tools, "node_modules", "fake-cli")
	bin := filepath.Join(tools, "node_modules", ".bin")
	os.MkdirAll(filepath.Join(pkg, "bin"), 0o755)
	os.MkdirAll(bin, 0o755)
	os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name":"fake-cli","version":"1.2.3"}`), 0o644)
	os.WriteFile(filepath.Join(pkg, "bin", "fake.js"), []byte("#!/bin/sh\n"), 0o755)
	os.Symlink("../fake-cli/bin/fake.js", filepath.Join(bin, "hoh-fake-cli"))
	t.Setenv("HOH_TOOLS", tools)
	return bin
}

func TestFindPrefersHOHToolsAndReadsVersion(t *testing.T) {
	bin := fakeInstall(t)
	p, err := Find("hoh-fake-cli")
	if err != nil || p != filepath.Join(bin, "hoh-fake-cli") {
		t.Fatalf("Find: %q %v", p, err)
	}
	v, err := InstalledVersion(p)
	if err != nil || v != "1.2.3" {
		t.Errorf("version %q %v", v, err)
	}
}

func TestFindMissingSaysHowToInstall(t *testing.T) {
	t.Setenv("HOH_TOOLS", t.TempDir())
	t.Setenv("PATH", t.TempDir())
	_, err := Find("hoh-no-such-cli")
	if err == nil || !strings.Contains(err.Error(), "scripts/install-harnesses.sh") {
		t.Fatalf("want install hint, got %v", err)
	}
}

func TestResolveChecksThePinnedVersion(t *testing.T) {
	bin := fakeInstall(t)
	t.Chdir(t.TempDir())
	p := filepath.Join(bin, "hoh-fake-cli")
	if got, err := Resolve("fake-cli", "hoh-fake-cli", p, "1.2.3"); err != nil || got != p {
		t.Fatalf("Resolve: %q %v", got, err)
	}
	_, err := Resolve("fake-cli", "hoh-fake-cli", p, "9.9.9")
	if err == nil || !strings.Contains(err.Error(), "is version 1.2.3, want 9.9.9") {
		t.Fatalf("want version mismatch, got %v", err)
	}
}

func TestResolveRefusesAConfiguredBinaryThatIsNotThere(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-codex")
	if _, err := Resolve("@openai/codex", "codex", missing, "0.171.0"); err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("want an error naming %s, got %v", missing, err)
	}
}

// install lays out <tools>/<pkg>@<version>/node_modules as
// scripts/install-harnesses.sh does, package.json saying version has.
func install(t *testing.T, tools, pkg, exe, version, has string) string {
	t.Helper()
	root := filepath.Join(VersionDir(tools, pkg, version), "node_modules")
	os.MkdirAll(filepath.Join(root, pkg, "bin"), 0o755)
	os.MkdirAll(filepath.Join(root, ".bin"), 0o755)
	os.WriteFile(filepath.Join(root, pkg, "package.json"), []byte(`{"name":"`+pkg+`","version":"`+has+`"}`), 0o644)
	os.WriteFile(filepath.Join(root, pkg, "bin", "cli.js"), []byte("#!/bin/sh\n"), 0o755)
	bin := filepath.Join(root, ".bin", exe)
	if err := os.Symlink(filepath.Join("..", pkg, "bin", "cli.js"), bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// Two versions of one package sit side by side and each is found by its
// version; a missing version is not replaced by another.
func TestFindVersionPicksThePackageAtThatVersion(t *testing.T) {
	tools := t.TempDir()
	t.Setenv("HOH_TOOLS", tools)
	t.Setenv("PATH", t.TempDir())
	t.Chdir(t.TempDir())
	old := install(t, tools, "@scope/agent", "agent", "0.80.10", "0.80.10")
	cur := install(t, tools, "@scope/agent", "agent", "1.6.0", "1.6.0")
	for v, want := range map[string]string{"0.80.10": old, "1.6.0": cur} {
		got, err := FindVersion("@scope/agent", "agent", v)
		if err != nil || got != want {
			t.Errorf("FindVersion %s: %q %v, want %q", v, got, err, want)
		}
		if p, err := Resolve("@scope/agent", "agent", "", v); err != nil || p != want {
			t.Errorf("Resolve %s: %q %v", v, p, err)
		}
	}
	_, err := FindVersion("@scope/agent", "agent", "1.5.0")
	if err == nil || !strings.Contains(err.Error(), "@scope/agent@1.5.0") || !strings.Contains(err.Error(), "install-harnesses.sh") {
		t.Errorf("missing version: %v", err)
	}
	// A directory whose package says another version is not that version.
	install(t, tools, "@scope/agent", "agent", "2.0.0", "2.0.1")
	if _, err := Resolve("@scope/agent", "agent", "", "2.0.0"); err == nil || !strings.Contains(err.Error(), "is version 2.0.1, want 2.0.0") {
		t.Errorf("lying directory: %v", err)
	}
}

// The single flat node_modules of earlier installs still serves exactly
// the package and version it holds, and nothing else.
func TestFindVersionReadsTheFlatLayoutOnlyForItsExactPackage(t *testing.T) {
	bin := fakeInstall(t) // fake-cli 1.2.3 in $HOH_TOOLS/node_modules
	t.Setenv("PATH", t.TempDir())
	t.Chdir(t.TempDir())
	if p, err := FindVersion("fake-cli", "hoh-fake-cli", "1.2.3"); err != nil || p != filepath.Join(bin, "hoh-fake-cli") {
		t.Errorf("flat layout: %q %v", p, err)
	}
	for _, c := range [][2]string{{"fake-cli", "1.2.4"}, {"@other/fake-cli", "1.2.3"}} {
		if p, err := FindVersion(c[0], "hoh-fake-cli", c[1]); err == nil {
			t.Errorf("%s@%s found at %s", c[0], c[1], p)
		}
	}
}

// A Node script installed with a Node runtime beside it runs under that
// runtime; a native binary, or a script without one, runs as it is.
func TestCommandStartsANodeScriptWithItsOwnRuntime(t *testing.T) {
	tools := t.TempDir()
	script := install(t, tools, "@scope/agent", "agent", "1.6.0", "1.6.0")
	os.WriteFile(filepath.Join(filepath.Dir(script), "..", "@scope", "agent", "bin", "cli.js"), []byte("#!/usr/bin/env node\n"), 0o755)
	if got := Command([]string{script, "-p"}); len(got) != 2 {
		t.Errorf("no runtime beside it: %v", got)
	}
	node := filepath.Join(filepath.Dir(script), "node")
	os.WriteFile(node, []byte("#!/bin/sh\n"), 0o755)
	if got := Command([]string{script, "-p"}); strings.Join(got, " ") != node+" "+script+" -p" {
		t.Errorf("node script: %v", got)
	}
	native := install(t, tools, "native-cli", "native", "2.0.0", "2.0.0") // its cli.js starts #!/bin/sh
	os.WriteFile(filepath.Join(filepath.Dir(native), "node"), []byte("#!/bin/sh\n"), 0o755)
	if got := Command([]string{native}); len(got) != 1 {
		t.Errorf("not a node script: %v", got)
	}
}
