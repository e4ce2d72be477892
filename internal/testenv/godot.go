package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// StandInGodot writes a test-only stand-in for Godot, not Godot: a script
// that prints its arguments and exits 0, so upstream GameCraft-Bench's build
// check (godot --headless --path /workspace/game --quit-after 5) passes. It
// renders nothing. Returns its path.
func StandInGodot(t testing.TB) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "godot")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho stand-in godot, not Godot: \"$@\"\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}
