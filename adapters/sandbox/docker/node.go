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
	out, err := exec.Command("ldd", node).Output()
	if err != nil {
		return nil, fmt.Errorf("ldd %s: %w", node, err)
	}
	seen := map[string]bool{}
	var ms []Mount
	add := func(host, ctr string) {
		if !seen[ctr] {
			seen[ctr] = true
			ms = append(ms, Mount{Host: host, Container: ctr, ReadOnly: true})
		}
	}
	add(node, node)
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
		add(real, p) // mount the file behind the symlink at the name the loader asks for
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); err != nil {
			return nil, fmt.Errorf("node prefix: %w", err)
		}
		abs, _ := filepath.Abs(d)
		add(abs, abs)
	}
	return ms, nil
}
