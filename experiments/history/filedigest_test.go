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

// oldEnough makes every file whose times are older than 20 ms cacheable,
// and waits until the files just written are.
func oldEnough(t *testing.T) {
	t.Helper()
	w := racyWindow
	racyWindow = 20 * time.Millisecond
	t.Cleanup(func() { racyWindow = w })
	time.Sleep(50 * time.Millisecond)
}

// digestCounting digests dir and says how many files it read.
func digestCounting(t *testing.T, dir string) (string, int64) {
	t.Helper()
	before := hashed.Load()
	d, err := Digest(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d, hashed.Load() - before
}

// A file older than the racy window is read once; any change to it is seen
// (content of the same size with its mtime put back, deletion, rename, a
// replacement by another inode with the same size and times, an exec bit)
// and the digest is always the one of a cold cache.
func TestDigestCacheReadsUnchangedFilesOnceAndSeesEveryChange(t *testing.T) {
	d := t.TempDir()
	os.MkdirAll(filepath.Join(d, "sub"), 0o755)
	for _, n := range []string{"a.txt", "b.txt", "sub/c.txt"} {
		os.WriteFile(filepath.Join(d, n), []byte("same"), 0o644)
	}
	oldEnough(t)
	first, n := digestCounting(t, d)
	if n != 3 {
		t.Fatalf("cold digest read %d files, want 3", n)
	}
	if again, n := digestCounting(t, d); again != first || n != 0 {
		t.Fatalf("warm digest %s read %d files (want %s and 0)", again, n, first)
	}
	cold := func() string {
		t.Helper()
		digestCache.Clear()
		s, _ := Digest(d)
		return s
	}
	seen := map[string]string{first: "start"}
	step := func(what string, change func()) {
		t.Helper()
		change()
		time.Sleep(50 * time.Millisecond) // past the racy window: only the cache key can tell
		got, _ := Digest(d)
		if prev, dup := seen[got]; dup {
			t.Fatalf("%s: digest %s is the one of %q: the change was missed", what, got, prev)
		}
		if c := cold(); c != got {
			t.Fatalf("%s: cached digest %s, cold digest %s", what, got, c)
		}
		seen[got] = what
	}
	a, b := filepath.Join(d, "a.txt"), filepath.Join(d, "b.txt")
	st, _ := os.Stat(a)
	step("same-size rewrite, mtime put back", func() {
		os.WriteFile(a, []byte("SAME"), 0o644)
		os.Chtimes(a, st.ModTime(), st.ModTime())
	})
	step("replaced by another inode of the same size and times", func() {
		tmp := filepath.Join(d, "tmp")
		os.WriteFile(tmp, []byte("diff"), 0o644)
		os.Chtimes(tmp, st.ModTime(), st.ModTime())
		os.Rename(tmp, a)
	})
	step("exec bit", func() { os.Chmod(b, 0o755) })
	step("renamed", func() { os.Rename(b, filepath.Join(d, "b2.txt")) })
	step("deleted", func() { os.Remove(filepath.Join(d, "sub", "c.txt")) })
}

// A file changed within the racy window is read by every digest, so a
// rewrite in the same clock tick (same size, same times) is still seen.
func TestDigestRereadsRacyFiles(t *testing.T) {
	d := t.TempDir()
	p := filepath.Join(d, "f")
	os.WriteFile(p, []byte("one"), 0o644)
	first, n1 := digestCounting(t, d)
	os.WriteFile(p, []byte("two"), 0o644) // likely the same tick as the first write
	second, n2 := digestCounting(t, d)
	if n1 != 1 || n2 != 1 {
		t.Fatalf("a racy file was read %d and %d times, want once per digest", n1, n2)
	}
	if first == second {
		t.Fatal("a racy rewrite kept the digest")
	}
	if _, n := digestCounting(t, d); n != 1 {
		t.Fatalf("a racy file was not re-read (%d reads)", n)
	}
}
