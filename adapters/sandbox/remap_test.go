package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Remapped shows sources at fixed targets, read-only unless writable, and
// empty tmpfs targets hide what the host has there; nothing is seen outside.
func TestRemappedShowsSourcesAtTheirTargets(t *testing.T) {
	if err := NamespacesAvailable(); err != nil {
		t.Fatalf("user namespaces are required for this test: %v", err)
	}
	root := t.TempDir()
	game, assets, scratch, hidden := filepath.Join(root, "game"), filepath.Join(root, "assets"), filepath.Join(root, "scratch"), filepath.Join(root, "tests")
	for _, d := range []string{game, assets, scratch, hidden} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(assets, "sprite.png"), []byte("png"), 0o644)
	os.WriteFile(filepath.Join(hidden, "rubric.json"), []byte("secret"), 0o644)
	view := filepath.Join(root, "view") // stands for /workspace
	mounts := func(gameWritable bool) []Mount {
		return []Mount{
			{Source: scratch, Target: view, Writable: true},
			{Source: game, Target: filepath.Join(view, "game"), Writable: gameWritable},
			{Source: assets, Target: filepath.Join(view, "assets")},
			{Target: hidden},
		}
	}
	run := func(m []Mount, script string) (string, int) {
		var out bytes.Buffer
		exit, err := Remapped{Inner: Local{}, Mounts: m}.Run(context.Background(), Command{Args: []string{"/bin/sh", "-c", script}, Dir: root, Stdout: &out, Stderr: &out})
		if err != nil {
			t.Fatal(err)
		}
		return out.String(), exit.Code
	}
	out, code := run(mounts(true), `cat view/assets/sprite.png && echo main > view/game/main.gd && echo shot > view/frame.png && ls tests | wc -l && ! (echo x > view/assets/new) 2>/dev/null`)
	if code != 0 || !strings.HasPrefix(out, "png0") {
		t.Fatalf("writable view: exit %d, %q", code, out)
	}
	if b, _ := os.ReadFile(filepath.Join(game, "main.gd")); string(b) != "main\n" {
		t.Errorf("a write to the writable game target did not reach its source: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(scratch, "frame.png")); string(b) != "shot\n" {
		t.Errorf("a write at the view's top level did not reach the scratch folder: %q", b)
	}
	if _, err := os.Stat(filepath.Join(hidden, "rubric.json")); err != nil {
		t.Error("hiding a directory in the view touched the host's copy")
	}
	// Read-only game (the QA Tester's candidate): a write fails even as root.
	if out, code := run(mounts(false), `echo y > view/game/qa.gd`); code == 0 {
		t.Fatalf("a write to the read-only game target succeeded: %q", out)
	}
	if _, err := os.Stat(filepath.Join(game, "qa.gd")); err == nil {
		t.Fatal("the read-only game target was written")
	}
	// Outside the invocation nothing is mounted.
	if entries, _ := os.ReadDir(filepath.Join(view, "game")); len(entries) != 0 {
		t.Fatalf("the view leaked onto the host: %v", entries)
	}
}
