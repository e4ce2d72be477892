package environment

import (
	"bytes"
	"os"
	"path/filepath"

	"github.com/hoh-research/hoh/adapters/sandbox/docker"
)

// withNativeLibraries adds to ms the shared libraries of the CLIs in the
// harness directory that are native executables (Claude Code's and
// OpenCode's, linked against glibc; Codex's is static), so they start in a
// task image without glibc or with less of it (Claude Code needs librt,
// which node does not), as the Node CLIs do with node's libraries.
func withNativeLibraries(ms []docker.Mount, dir string) ([]docker.Mount, error) {
	var bins []string
	for _, pattern := range []string{"*/node_modules/.bin/*", "@*/*/node_modules/.bin/*", "node_modules/.bin/*"} {
		matches, _ := filepath.Glob(filepath.Join(dir, pattern))
		for _, m := range matches {
			if real, err := filepath.EvalSymlinks(m); err == nil && isELF(real) {
				bins = append(bins, real)
			}
		}
	}
	libs, err := docker.LibraryMounts(bins...)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, m := range ms {
		have[m.Container] = true
	}
	for _, l := range libs {
		if !have[l.Container] {
			have[l.Container] = true
			ms = append(ms, l)
		}
	}
	return ms, nil
}

func isELF(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	magic := make([]byte, 4)
	n, _ := f.Read(magic)
	return n == 4 && bytes.Equal(magic, []byte("\x7fELF"))
}
