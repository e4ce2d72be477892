package docker

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// NodeMounts makes host-installed node programs (the harness CLIs installed
// by scripts/install-harnesses.sh under <repo>/.tools/harnesses) runnable in a
// container without network or node in the image: it bind-mounts, read-only
// and at the same paths, the node binary, every shared library ldd lists for
// it (with the dynamic loader), and each of the given directories (npm
// prefixes). Put filepath.Dir(node) and the prefixes' bin dirs on PATH.
func NodeMounts(node string, dirs ...string) ([]Mount, error) {
	node, err := filepath.EvalSymlinks(node)
	if err != nil {
		return nil, fmt.Errorf("node binary: %w", err)
	}
	ms, err := LibraryMounts(node)
	if err != nil {
		return nil, err
	}
	ms = append([]Mount{{Host: node, Container: node, ReadOnly: true}}, ms...)
	for _, d := range dirs {
		if _, err := os.Stat(d); err != nil {
			return nil, fmt.Errorf("node prefix: %w", err)
		}
		abs, _ := filepath.Abs(d)
		ms = append(ms, Mount{Host: abs, Container: abs, ReadOnly: true})
	}
	return ms, nil
}

// LibraryMounts are read-only mounts, at the paths the dynamic loader asks
// for, of every shared library ldd lists for the dynamically linked
// executables bins (with the loader itself): a native CLI (Claude Code's,
// OpenCode's) then starts in an image without those libraries. A static
// executable needs none.
func LibraryMounts(bins ...string) ([]Mount, error) {
	seen := map[string]bool{}
	var ms []Mount
	for _, bin := range bins {
		out, err := exec.Command("ldd", bin).Output()
		if err != nil {
			if ee, ok := err.(*exec.ExitError); ok && strings.Contains(string(out)+string(ee.Stderr), "not a dynamic executable") {
				continue
			}
			return nil, fmt.Errorf("ldd %s: %w", bin, err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			// "libz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x...)" or "/lib64/ld-linux-x86-64.so.2 (0x...)"
			f := strings.Fields(line)
			var p string
			switch {
			case len(f) >= 3 && f[1] == "=>" && strings.HasPrefix(f[2], "/"):
				p = f[2]
			case len(f) >= 1 && strings.HasPrefix(f[0], "/"):
				p = f[0]
			default:
				continue
			}
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				return nil, fmt.Errorf("library %s: %w", p, err)
			}
			if !seen[p] { // the file behind the symlink, at the name the loader asks for
				seen[p] = true
				ms = append(ms, Mount{Host: real, Container: p, ReadOnly: true})
			}
		}
	}
	return ms, nil
}
