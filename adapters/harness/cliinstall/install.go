package cliinstall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
)

// NodeRuntime is the Node version installed beside a package whose Node
// scripts need a newer Node than the system's (Pi since 0.74 wants 22).
const NodeRuntime = "22.23.3"

// Installer puts npm packages side by side into Dir:
// <Dir>/<package>@<version>/node_modules/.bin/<executable>.
type Installer struct {
	Dir string
	// NPM and Node are the commands used ("npm" and "node" on PATH when empty).
	NPM, Node string
	// Progress receives a line per package and npm's errors.
	Progress io.Writer
}

// Install installs every pin (package@version) not yet installed, verifying
// each package's version afterwards. An interrupted install never looks
// installed: npm fills <pin>.partial, which is renamed only on success.
func (in Installer) Install(ctx context.Context, pins []string) error {
	if in.Dir == "" {
		return errors.New("cliinstall: no install directory")
	}
	if in.Progress == nil {
		in.Progress = io.Discard
	}
	npm := in.npm()
	if _, err := exec.LookPath(npm); err != nil {
		return fmt.Errorf("cliinstall: npm not found (apt-get install nodejs npm): %w", err)
	}
	if err := os.MkdirAll(in.Dir, 0o755); err != nil {
		return err
	}
	unlock, err := in.lock()
	if err != nil {
		return err
	}
	defer unlock()
	for i, pin := range pins {
		if err := in.installOne(ctx, pin, fmt.Sprintf("[%d/%d]", i+1, len(pins))); err != nil {
			return err
		}
	}
	fmt.Fprintf(in.Progress, "hoh harnesses: CLIs are in %s/<package>@<version>/node_modules/.bin\n", in.Dir)
	return nil
}

// lock serialises installers sharing Dir (two `make test`s, a test beside
// scripts/install-harnesses.sh): each removes and renames <pin>.partial, so
// two at once would delete each other's half-done install. The one that
// waited then finds every pin installed.
func (in Installer) lock() (func(), error) {
	f, err := os.OpenFile(filepath.Join(in.Dir, ".install.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		fmt.Fprintf(in.Progress, "hoh harnesses: waiting for another install into %s\n", in.Dir)
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, fmt.Errorf("cliinstall: lock %s: %w", f.Name(), err)
		}
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

func (in Installer) npm() string {
	if in.NPM != "" {
		return in.NPM
	}
	return "npm"
}

func (in Installer) node() string {
	if in.Node != "" {
		return in.Node
	}
	return "node"
}

func (in Installer) installOne(ctx context.Context, pin, step string) error {
	name, want, ok := SplitPin(pin)
	if !ok {
		return fmt.Errorf("cliinstall: %q is not package@version", pin)
	}
	dir := filepath.Join(in.Dir, pin)
	if v, _ := packageVersion(dir, name); v == want {
		fmt.Fprintf(in.Progress, "%s %s already installed\n", step, pin)
		return in.addRuntime(ctx, dir, name)
	}
	fmt.Fprintf(in.Progress, "%s installing %s into %s\n", step, pin, dir)
	tmp := dir + ".partial"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "package.json"), []byte(`{"name":"hoh-harness","private":true}`+"\n"), 0o644); err != nil {
		return err
	}
	// npm runs from inside the directory: from Dir, "pin" would name it.
	if err := in.run(ctx, tmp, in.npm(), "install", "--prefix", tmp, "--save-exact", "--no-audit", "--no-fund", "--loglevel=error", pin); err != nil {
		return fmt.Errorf("cliinstall: npm install %s: %w", pin, err)
	}
	// Verified before the rename: a wrong version must not look installed.
	if have, _ := packageVersion(tmp, name); have != want {
		return fmt.Errorf("cliinstall: npm install %s installed version %q (left in %s)", pin, have, tmp)
	}
	if err := in.addRuntime(ctx, tmp, name); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}

// SplitPin splits package@version; a scoped package keeps its leading @.
func SplitPin(pin string) (pkg, version string, ok bool) {
	i := strings.LastIndex(pin, "@")
	if i <= 0 || i == len(pin)-1 {
		return "", "", false
	}
	return pin[:i], pin[i+1:], true
}

func (in Installer) run(ctx context.Context, dir string, args ...string) error {
	// A package's install script may start its CLI (OpenCode 1.18's does),
	// which makes its config, data, state and cache dirs: they go to a
	// throwaway place, not the user's. npm's own ~/.npmrc and cache stay.
	scratch, err := os.MkdirTemp("", "hoh-npm-xdg-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, in.Progress, in.Progress
	cmd.Env = os.Environ()
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"} {
		cmd.Env = append(cmd.Env, v+"="+filepath.Join(scratch, strings.ToLower(strings.TrimPrefix(v, "XDG_"))))
	}
	return cmd.Run()
}

// addRuntime installs node@NodeRuntime beside a package whose Node scripts
// ask for a newer Node than the system's, unless it is there.
func (in Installer) addRuntime(ctx context.Context, dir, pkg string) error {
	need, err := in.needsRuntime(ctx, dir, pkg)
	if err != nil || !need {
		return err
	}
	if v, _ := packageVersion(dir, "node"); v == NodeRuntime {
		return nil
	}
	fmt.Fprintf(in.Progress, "  %s needs a newer Node than the system's; adding node@%s\n", pkg, NodeRuntime)
	if err := in.run(ctx, dir, in.npm(), "install", "--prefix", dir, "--save-exact", "--no-audit", "--no-fund", "--loglevel=error", "node@"+NodeRuntime); err != nil {
		return fmt.Errorf("cliinstall: npm install node@%s for %s: %w", NodeRuntime, pkg, err)
	}
	out, err := exec.CommandContext(ctx, filepath.Join(dir, "node_modules", ".bin", "node"), "--version").Output()
	if err != nil || strings.TrimSpace(string(out)) != "v"+NodeRuntime {
		return fmt.Errorf("cliinstall: node@%s in %s does not run (%q, %v)", NodeRuntime, dir, strings.TrimSpace(string(out)), err)
	}
	return nil
}

// needsRuntime: the package starts through a Node script (a bin whose
// shebang names node; Claude Code's is a native binary) and its
// engines.node minimum is above the system Node's version.
func (in Installer) needsRuntime(ctx context.Context, dir, pkg string) (bool, error) {
	root := filepath.Join(dir, "node_modules", pkg)
	data, err := os.ReadFile(filepath.Join(root, "package.json"))
	if err != nil {
		return false, err
	}
	var pj struct {
		Bin     json.RawMessage   `json:"bin"`
		Engines map[string]string `json:"engines"`
	}
	if err := json.Unmarshal(data, &pj); err != nil {
		return false, fmt.Errorf("cliinstall: %s: %w", filepath.Join(root, "package.json"), err)
	}
	script := false
	for _, b := range binPaths(pj.Bin) {
		if isNodeScript(filepath.Join(root, b)) {
			script = true
		}
	}
	want, ok := minimumVersion(pj.Engines["node"])
	if !script || !ok {
		return false, nil
	}
	out, err := exec.CommandContext(ctx, in.node(), "--version").Output()
	if err != nil {
		return false, fmt.Errorf("cliinstall: %s --version: %w", in.node(), err)
	}
	have, ok := minimumVersion(strings.TrimPrefix(strings.TrimSpace(string(out)), "v"))
	return ok && less(have, want), nil
}

// binPaths reads package.json's bin: a string or a name -> path object.
func binPaths(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil && one != "" {
		return []string{one}
	}
	var many map[string]string
	if json.Unmarshal(raw, &many) != nil {
		return nil
	}
	var out []string
	for _, p := range many {
		out = append(out, p)
	}
	return out
}

var versionRange = regexp.MustCompile(`^\s*(?:>=|\^|~)?\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?`)

// minimumVersion reads the first X[.Y[.Z]] of a range (>=, ^ or ~ taken as
// a minimum).
func minimumVersion(r string) ([3]int, bool) {
	m := versionRange.FindStringSubmatch(r)
	if m == nil {
		return [3]int{}, false
	}
	var v [3]int
	for i := range v {
		v[i], _ = strconv.Atoi(m[i+1])
	}
	return v, true
}

func less(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// packageVersion is the version of package pkg installed under dir, "" if none.
func packageVersion(dir, pkg string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "node_modules", pkg, "package.json"))
	if err != nil {
		return "", err
	}
	var pj struct{ Version string }
	if err := json.Unmarshal(data, &pj); err != nil {
		return "", err
	}
	return pj.Version, nil
}

// RemoveFlatLayout removes the single node_modules of earlier installs
// (<dir>/node_modules), once the side-by-side installs are complete.
func RemoveFlatLayout(dir string) error {
	for _, p := range []string{"node_modules", "package.json", "package-lock.json"} {
		if err := os.RemoveAll(filepath.Join(dir, p)); err != nil {
			return err
		}
	}
	return nil
}
