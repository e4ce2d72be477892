package hoh

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// The embedded copies are the repository files, byte for byte, and no file
// of those folders is left out (embed skips names starting with . or _).
func TestEmbeddedPaperDataEqualsRepositoryFiles(t *testing.T) {
	for _, dir := range []string{"results/paper", "configs/paper"} {
		onDisk := map[string]bool{}
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			onDisk[filepath.ToSlash(p)] = true
			want, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			got, err := Paper.ReadFile(filepath.ToSlash(p))
			if err != nil {
				t.Errorf("%s is not embedded: %v", p, err)
				return nil
			}
			if !bytes.Equal(got, want) {
				t.Errorf("embedded %s differs from the repository file", p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(onDisk) == 0 {
			t.Fatalf("no files under %s", dir)
		}
		err = fs.WalkDir(Paper, dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !onDisk[p] {
				t.Errorf("embedded %s has no repository file", p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
