package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// npmInstall lays out package pkg at version the way npm does, with exe in
// node_modules/.bin, under a tools directory's <pkg>@<version>.
func npmInstall(t *testing.T, tools, pkg, exe, version string) string {
	t.Helper()
	dir := filepath.Join(tools, pkg+"@"+version, "node_modules")
	if err := os.MkdirAll(filepath.Join(dir, pkg), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, pkg, "package.json"), []byte(`{"name":"`+pkg+`","version":"`+version+`"}`), 0o644)
	os.WriteFile(filepath.Join(dir, pkg, "cli.js"), []byte("#!/bin/sh\n"), 0o755)
	os.MkdirAll(filepath.Join(dir, ".bin"), 0o755)
	bin := filepath.Join(dir, ".bin", exe)
	if err := os.Symlink(filepath.Join("..", pkg, "cli.js"), bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// Every adapter settles its CLI through Versions.Resolve: the default pin
// when the config names no version, a named version's own install, a
// configured binary checked against the version, unsupported versions refused.
func TestVersionsResolveSettlesVersionAndExecutable(t *testing.T) {
	tools := t.TempDir()
	t.Setenv("HOH_TOOLS", tools)
	v := Versions{Package: "some-cli", Pins: []string{"2.0.0", "1.5.0"}, Oldest: "1.0.0"}
	newest := npmInstall(t, tools, "some-cli", "some", "2.0.0")
	unpinned := npmInstall(t, tools, "some-cli", "some", "1.7.3")

	if bin, version, err := v.Resolve("some", "", ""); err != nil || bin != newest || version != "2.0.0" {
		t.Fatalf("no version: %q %q %v, want the default pin %s", bin, version, err, newest)
	}
	if bin, version, err := v.Resolve("some", "", "1.7.3"); err != nil || bin != unpinned || version != "1.7.3" {
		t.Fatalf("version 1.7.3: %q %q %v, want %s", bin, version, err, unpinned)
	}
	if _, _, err := v.Resolve("some", newest, "1.7.3"); err == nil || !strings.Contains(err.Error(), "is version 2.0.0, want 1.7.3") {
		t.Fatalf("a binary of another version: %v", err)
	}
	if _, _, err := v.Resolve("some", "", "1.5.0"); err == nil || !strings.Contains(err.Error(), "some-cli@1.5.0") {
		t.Fatalf("a pin that is not installed: %v", err)
	}
	for _, bad := range []string{"0.9.9", "latest"} {
		if _, _, err := v.Resolve("some", newest, bad); err == nil {
			t.Fatalf("version %q was accepted", bad)
		}
	}
}
