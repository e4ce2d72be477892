package harness

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A workspace scanned at every stage is read again only where it changed
// (its hard-link snapshots not at all), and a change that keeps a file's size and mtime (an agent restoring its
// timestamp, a file renamed over another) is still found.
func TestSecretScanReadsOnlyWhatChanged(t *testing.T) {
	const key = "sk-live-0123456789"
	ws := t.TempDir()
	var names []string
	for i := range 50 {
		name := filepath.Join("src", string(rune('a'+i%26))+strings.Repeat("x", i/26)+".txt")
		names = append(names, name)
		writeFile(t, filepath.Join(ws, name), strings.Repeat("-", len(key)))
	}
	scan := &SecretScan{Secrets: []string{key}}
	found := scanOnce(t, scan, ws)
	if len(found) != 0 || scan.opened != 50 {
		t.Fatalf("first scan: found %v, read %d files; want none found, 50 read", found, scan.opened)
	}
	// Files changed within the racy window are read again: none was
	// remembered yet.
	if scanOnce(t, scan, ws); scan.opened != 50 {
		t.Fatalf("a scan right after the files were written read %d files, want all 50 again", scan.opened)
	}
	time.Sleep(racyWindow + 100*time.Millisecond)
	scanOnce(t, scan, ws)
	if scanOnce(t, scan, ws); scan.opened != 0 {
		t.Fatalf("an unchanged tree: read %d files, want 0", scan.opened)
	}
	// A hard-link snapshot of the tree (a link changes the inode's ctime,
	// so the linked file is read once more, then known by its inode).
	snap := t.TempDir()
	if err := os.Link(filepath.Join(ws, names[0]), filepath.Join(snap, "linked")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(racyWindow + 100*time.Millisecond)
	if scanOnce(t, scan, ws); scan.opened != 1 {
		t.Fatalf("after one file was linked: read %d files, want 1", scan.opened)
	}
	if scanOnce(t, scan, snap); scan.opened != 0 {
		t.Fatalf("a hard link to a file found clean: read %d files, want 0", scan.opened)
	}

	// Same size, mtime put back: only ctime tells.
	sneaky := filepath.Join(ws, names[3])
	info, _ := os.Stat(sneaky)
	writeFile(t, sneaky, key)
	if err := os.Chtimes(sneaky, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	// A file renamed over another of the same size.
	other := filepath.Join(ws, "other")
	writeFile(t, other, key)
	if err := os.Rename(other, filepath.Join(ws, names[7])); err != nil {
		t.Fatal(err)
	}
	found = scanOnce(t, scan, ws)
	want := []string{names[3], names[7]}
	slices.Sort(found)
	if !slices.Equal(found, want) || scan.opened != 2 {
		t.Fatalf("after two changes: found %v, read %d files; want %v, 2 read", found, scan.opened, want)
	}
	for _, n := range want {
		if got, _ := os.ReadFile(filepath.Join(ws, n)); string(got) != Redacted {
			t.Fatalf("%s not redacted: %q", n, got)
		}
	}
}

func scanOnce(t *testing.T, scan *SecretScan, root string) []string {
	t.Helper()
	scan.opened = 0
	found, err := scan.Found(root)
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func writeFile(t *testing.T, p, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkScrubFoundSmallFiles is a full scan of 2,000 small files (a
// secret scan's first read of a workspace).
func BenchmarkScrubFoundSmallFiles(b *testing.B) {
	root := b.TempDir()
	for i := range 2000 {
		p := filepath.Join(root, strconv.Itoa(i%40), strconv.Itoa(i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("package main // "+strconv.Itoa(i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if _, err := ScrubFound(root, []string{"sk-live-0123456789"}); err != nil {
			b.Fatal(err)
		}
	}
}

// File is the scan of one entry of the caller's own walk: it finds and
// redacts as Found does, and shares what Found remembers as clean.
func TestSecretScanFileIsFoundForOneEntry(t *testing.T) {
	const key = "sk-live-0123456789"
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "clean.txt"), "nothing here")
	writeFile(t, filepath.Join(ws, "d", "leak.txt"), "key="+key)
	scan := &SecretScan{Secrets: []string{key}}
	var found []string
	err := filepath.WalkDir(ws, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == ws {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(ws, p)
		hit, err := scan.File(ws, rel, info)
		if hit {
			found = append(found, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(found, []string{filepath.Join("d", "leak.txt")}) || scan.opened != 2 {
		t.Fatalf("found %v, read %d files; want d/leak.txt, 2 read", found, scan.opened)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "d", "leak.txt")); string(got) != "key="+Redacted {
		t.Fatalf("not redacted: %q", got)
	}
	time.Sleep(racyWindow + 100*time.Millisecond)
	scanOnce(t, scan, ws)
	if scanOnce(t, scan, ws); scan.opened != 0 {
		t.Fatalf("Found after File and a settled tree read %d files, want 0", scan.opened)
	}
}
