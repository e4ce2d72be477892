package history

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A hole and written zeros digest alike, a changed byte does not, and a
// 100 GiB sparse file digests without reading 100 GiB (this test would time
// out otherwise).
func TestDigestOfSparseFilesIsContentOnly(t *testing.T) {
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	f, _ := os.Create(filepath.Join(a, "f"))
	f.WriteAt([]byte("x"), 3*block+5)
	f.Truncate(64 * block)
	f.Close()
	dense := make([]byte, 64*block)
	dense[3*block+5] = 'x'
	os.WriteFile(filepath.Join(b, "f"), dense, 0o644)
	dense[10] = 1
	os.WriteFile(filepath.Join(c, "f"), dense, 0o644)
	da, _ := Digest(a)
	db, _ := Digest(b)
	dc, _ := Digest(c)
	if da != db || da == dc {
		t.Fatalf("sparse %s dense %s changed %s", da, db, dc)
	}
	big, _ := os.Create(filepath.Join(t.TempDir(), "big"))
	big.WriteAt([]byte("end"), 100<<30-3)
	big.Close()
	start := time.Now()
	if _, err := hashFile(big.Name()); err != nil {
		t.Fatal(err)
	}
	t.Logf("100 GiB sparse file digested in %s", time.Since(start))
}

// The digest cache is keyed by the file's identity: a rewrite of the same
// size, even in the same second, is seen.
func TestDigestSeesRewritesOfCachedFiles(t *testing.T) {
	d := t.TempDir()
	p := filepath.Join(d, "a.txt")
	os.WriteFile(p, []byte("one"), 0o644)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(p, old, old)
	first, _ := Digest(d)
	if again, _ := Digest(d); again != first {
		t.Fatal("digest not stable")
	}
	os.WriteFile(p, []byte("two"), 0o644)
	os.Chtimes(p, old, old) // same size and mtime: ctime and the racy window still tell
	if changed, _ := Digest(d); changed == first {
		t.Fatal("a rewrite with the same size and mtime kept the cached digest")
	}
}
