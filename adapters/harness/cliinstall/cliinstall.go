// Package cliinstall locates the coding-agent CLIs that
// scripts/install-harnesses.sh installs with npm.
package cliinstall

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// InstallHint says how to get the CLIs.
const InstallHint = "run scripts/install-harnesses.sh (installs the pinned CLIs into $HOH_TOOLS, default <repo>/.tools/harnesses)"

// Find returns the path of the executable name ("codex", "claude",
// "opencode", "pi"), looking in $HOH_TOOLS (its node_modules/.bin, then
// itself), then <repo>/.tools/harnesses/node_modules/.bin, then PATH.
func Find(name string) (string, error) {
	var dirs []string
	if t := os.Getenv("HOH_TOOLS"); t != "" {
		dirs = append(dirs, filepath.Join(t, "node_modules", ".bin"), t)
	}
	if root, err := RepoRoot(); err == nil {
		dirs = append(dirs, filepath.Join(root, ".tools", "harnesses", "node_modules", ".bin"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("cliinstall: %s not found in %v or PATH: %s", name, dirs, InstallHint)
}

// RepoRoot walks up from the working directory to the directory holding go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cliinstall: no go.mod above the working directory")
		}
		dir = parent
	}
}

// InstalledVersion reads the npm package version of an installed CLI
// without running it (running even --version writes state under $HOME). It
// follows the bin symlink and walks up to the nearest package.json.
func InstalledVersion(binPath string) (string, error) {
	real, err := filepath.EvalSymlinks(binPath)
	if err != nil {
		return "", err
	}
	for dir := filepath.Dir(real); ; dir = filepath.Dir(dir) {
		data, err := os.ReadFile(filepath.Join(dir, "package.json"))
		if err == nil {
			var pkg struct{ Name, Version string }
			if err := json.Unmarshal(data, &pkg); err != nil {
				return "", fmt.Errorf("cliinstall: %s: %w", filepath.Join(dir, "package.json"), err)
			}
			return pkg.Version, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("cliinstall: no package.json above %s (not an npm install?)", real)
		}
	}
}

// Resolve returns binary, or Find(name) when it is empty, and fails when the
// installed npm package reports a version other than want.
func Resolve(name, binary, want string) (string, error) {
	if binary == "" {
		bin, err := Find(name)
		if err != nil {
			return "", err
		}
		binary = bin
	} else {
		// A configured binary that is not there fails now, not as every
		// trial's replaced attempts later.
		bin, err := exec.LookPath(binary)
		if err != nil {
			return "", fmt.Errorf("%s: binary %s: %w", name, binary, errors.Unwrap(err))
		}
		binary = bin
	}
	if v, err := InstalledVersion(binary); err == nil && v != want {
		return "", fmt.Errorf("%s: %s is version %s, want %s: %s", name, binary, v, want, InstallHint)
	}
	return binary, nil
}
