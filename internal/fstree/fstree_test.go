package fstree

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func allocated(t *testing.T, p string) int64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks * 512
}

// A 10 GiB sparse file with two data extents copies in no time and
// allocates what the source allocates; modes, links and skips follow the
// policy.
func TestCopyKeepsSparseFilesSparse(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "out")
	f, err := os.Create(filepath.Join(src, "sparse.bin"))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("head"), 0)
	f.WriteAt([]byte("middle"), 5<<30)
	f.Truncate(10 << 30)
	f.Close()
	os.MkdirAll(filepath.Join(src, "d"), 0o755)
	os.WriteFile(filepath.Join(src, "d", "run.sh"), []byte("echo hi\n"), 0o4755)
	os.Symlink("../outside", filepath.Join(src, "d", "link"))
	os.WriteFile(filepath.Join(src, ".hoh"), []byte("state"), 0o644)
	if err := Copy(src, dst, Options{Skip: []string{".hoh"}, DirBits: 0o700}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dst, "sparse.bin")
	st, err := os.Stat(out)
	if err != nil || st.Size() != 10<<30 {
		t.Fatalf("size %v %v", st, err)
	}
	if a, want := allocated(t, out), allocated(t, filepath.Join(src, "sparse.bin")); a > want+(1<<20) {
		t.Fatalf("copy allocates %d bytes, source %d", a, want)
	}
	g, _ := os.Open(out)
	buf := make([]byte, 6)
	g.ReadAt(buf, 5<<30)
	g.Close()
	if !bytes.Equal(buf, []byte("middle")) {
		t.Fatalf("data at 5 GiB %q", buf)
	}
	if fi, err := os.Stat(filepath.Join(dst, "d", "run.sh")); err != nil || fi.Mode() != 0o755 {
		t.Fatalf("run.sh mode %v %v, want 0755 without setuid", fi, err)
	}
	if l, err := os.Readlink(filepath.Join(dst, "d", "link")); err != nil || l != "../outside" {
		t.Fatalf("link %q %v", l, err)
	}
	if _, err := os.Lstat(filepath.Join(dst, ".hoh")); err == nil {
		t.Fatal("skipped entry copied")
	}
}

func TestLinkSharesFilesAndCopiesASingleFile(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "snap")
	os.WriteFile(filepath.Join(src, "a.txt"), []byte("a"), 0o644)
	if err := Copy(src, dst, Options{Link: true}); err != nil {
		t.Fatal(err)
	}
	a, _ := os.Stat(filepath.Join(src, "a.txt"))
	b, _ := os.Stat(filepath.Join(dst, "a.txt"))
	if !os.SameFile(a, b) {
		t.Fatal("Link made a copy")
	}
	one := filepath.Join(t.TempDir(), "x", "a.txt")
	if err := Copy(filepath.Join(src, "a.txt"), one, Options{FileBits: 0o600}); err != nil {
		t.Fatal(err)
	}
	if c, _ := os.Stat(one); c == nil || os.SameFile(a, c) {
		t.Fatal("single file not copied")
	}
}
