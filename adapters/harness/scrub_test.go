package harness

import (
	"os"
	"path/filepath"
	"testing"
)

func TestScrubSecrets(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a", "snap.sh")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte("export KEY=sk-secret-1\nexport OTHER=x\n"), 0o600)
	clean := filepath.Join(dir, "clean.txt")
	os.WriteFile(clean, []byte("nothing here"), 0o644)
	if err := ScrubSecrets(dir, []string{"sk-secret-1", "x"}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if string(got) != "export KEY=[REDACTED]\nexport OTHER=x\n" {
		t.Fatalf("got %q (short values must not be redacted)", got)
	}
	if info, _ := os.Stat(p); info.Mode().Perm() != 0o600 {
		t.Fatal("mode must be kept")
	}
	if err := ScrubSecrets(filepath.Join(dir, "missing"), []string{"sk-secret-1"}); err != nil {
		t.Fatal("a missing root is not an error")
	}
}
