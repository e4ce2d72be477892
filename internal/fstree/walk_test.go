package fstree

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"syscall"
	"testing"
)

// Walk must see what filepath.WalkDir with os.Lstat sees, entry for entry,
// with the same Mode and stat: digests and the file-id caches key on them.
func TestWalkMatchesWalkDirAndLstat(t *testing.T) {
	root := t.TempDir()
	mk := func(rel string, mode fs.FileMode) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(rel), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	mk("a.txt", 0o644)
	mk("a/x", 0o755|fs.ModeSetuid)
	mk("a/b/c/deep", 0o600)
	mk("sticky/f", 0o644)
	if err := os.Chmod(filepath.Join(root, "sticky"), 0o755|fs.ModeSticky); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a", filepath.Join(root, "link-to-dir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../loop", filepath.Join(root, "a", "b", "loop")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}

	want := map[string]fs.FileInfo{}
	if err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		info, err := os.Lstat(p)
		rel, _ := filepath.Rel(root, p)
		want[rel] = info
		return err
	}); err != nil {
		t.Fatal(err)
	}
	got := map[string]fs.FileInfo{}
	var order []string
	if err := Walk(root, func(rel string, info fs.FileInfo) (bool, error) {
		got[rel] = info
		order = append(order, rel)
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("Walk saw %d entries, WalkDir %d: %v", len(got), len(want), order)
	}
	for rel, w := range want {
		g, ok := got[rel]
		if !ok {
			t.Errorf("Walk missed %s", rel)
			continue
		}
		if g.Name() != w.Name() || g.Mode() != w.Mode() || g.Size() != w.Size() || !g.ModTime().Equal(w.ModTime()) || g.IsDir() != w.IsDir() {
			t.Errorf("%s: Walk %s %v %d %v, Lstat %s %v %d %v", rel, g.Name(), g.Mode(), g.Size(), g.ModTime(), w.Name(), w.Mode(), w.Size(), w.ModTime())
		}
		// A directory's access time moves as the walks read it.
		gs, ws := *g.Sys().(*syscall.Stat_t), *w.Sys().(*syscall.Stat_t)
		gs.Atim, ws.Atim = syscall.Timespec{}, syscall.Timespec{}
		if !reflect.DeepEqual(gs, ws) {
			t.Errorf("%s: Sys differs: %+v against %+v", rel, gs, ws)
		}
	}
	// Parents come before what they hold.
	seen := map[string]bool{}
	for _, rel := range order {
		if d := filepath.Dir(rel); d != "." && !seen[d] {
			t.Errorf("%s came before its directory", rel)
		}
		seen[rel] = true
	}
}

func TestWalkDescendsOnlyWhereAsked(t *testing.T) {
	root := t.TempDir()
	for _, rel := range []string{"keep/a", "skip/b", "skip/c/d"} {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var seen []string
	if err := Walk(root, func(rel string, info fs.FileInfo) (bool, error) {
		seen = append(seen, rel)
		return rel != "skip", nil
	}); err != nil {
		t.Fatal(err)
	}
	sort.Strings(seen)
	if want := []string{"keep", "keep/a", "skip"}; !reflect.DeepEqual(seen, want) {
		t.Fatalf("saw %v, want %v", seen, want)
	}
}

// A directory hoh cannot read ends the walk with an error naming it, as
// WalkDir's does: a digest must never leave part of a tree out silently.
func TestWalkFailsOnAnUnreadableDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		// root reads every directory: make one a FIFO's parent swapped
		// for a file instead, which open(O_DIRECTORY) refuses.
		root := t.TempDir()
		os.MkdirAll(filepath.Join(root, "d"), 0o755)
		err := Walk(root, func(rel string, info fs.FileInfo) (bool, error) {
			if rel == "d" {
				os.Remove(filepath.Join(root, "d"))
				os.WriteFile(filepath.Join(root, "d"), nil, 0o644)
			}
			return true, nil
		})
		if err == nil || !filepath.IsAbs(err.(*fs.PathError).Path) {
			t.Fatalf("a directory replaced by a file mid-walk: err %v, want a path error", err)
		}
		return
	}
	root := t.TempDir()
	d := filepath.Join(root, "d")
	os.MkdirAll(d, 0o000)
	defer os.Chmod(d, 0o755)
	if err := Walk(root, func(string, fs.FileInfo) (bool, error) { return true, nil }); err == nil {
		t.Fatal("an unreadable directory was walked without an error")
	}
}

func TestSameFileAcrossWalkAndLstat(t *testing.T) {
	root := t.TempDir()
	a, b, c := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "c")
	os.WriteFile(a, []byte("x"), 0o644)
	os.Link(a, b)
	os.WriteFile(c, []byte("x"), 0o644)
	infos, err := ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]fs.FileInfo{}
	for _, i := range infos {
		by[i.Name()] = i
	}
	la, _ := os.Lstat(a)
	if !SameFile(by["a"], by["b"]) || !SameFile(by["b"], la) {
		t.Error("a hard link is not the same file")
	}
	if SameFile(by["a"], by["c"]) {
		t.Error("two files with the same bytes are the same file")
	}
}
