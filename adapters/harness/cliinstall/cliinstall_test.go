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
	if p, err := Resolve("hoh-fake-cli", "", "1.2.3"); err != nil || p != filepath.Join(bin, "hoh-fake-cli") {
		t.Fatalf("Resolve: %q %v", p, err)
	}
	_, err := Resolve("hoh-fake-cli", "", "9.9.9")
	if err == nil || !strings.Contains(err.Error(), "is version 1.2.3, want 9.9.9") {
		t.Fatalf("want version mismatch, got %v", err)
	}
}

func TestResolveRefusesAConfiguredBinaryThatIsNotThere(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-codex")
	if _, err := Resolve("codex", missing, "0.171.0"); err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("want an error naming %s, got %v", missing, err)
	}
}
