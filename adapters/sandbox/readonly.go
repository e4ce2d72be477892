package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
)

// ReadOnlyView runs each command of a host executor in its own unprivileged
// user + mount namespace in which Paths are bind-mounted read-only: a write
// under them fails with EROFS whatever the process's uid (root included,
// which plain file modes do not stop). It is how the QA Tester gets a frozen
// candidate. Processes stay in the caller's process group, so Local's
// timeouts and kills apply unchanged (unshare execs, it does not fork).
type ReadOnlyView struct {
	Inner Executor
	Paths []string
}

// roScript bind-mounts each argument up to "--" onto itself read-only, then
// execs the rest; exit 125 says the view could not be made. The working
// directory is entered again: the one inherited still points below the
// writable mount.
const roScript = `while [ "$1" != -- ]; do mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" || exit 125; shift; done; shift; cd "$(pwd -P)" && exec "$@"`

// Run implements Executor.
func (v ReadOnlyView) Run(ctx context.Context, cmd Command) (Exit, error) {
	if len(v.Paths) == 0 {
		return v.Inner.Run(ctx, cmd)
	}
	if err := NamespacesAvailable(); err != nil {
		return Exit{Code: -1}, err
	}
	args := append([]string{"unshare", "--user", "--map-root-user", "--mount", "--", "/bin/sh", "-c", roScript, "hoh-ro"}, v.Paths...)
	cmd.Args = append(append(args, "--"), cmd.Args...)
	return v.Inner.Run(ctx, cmd)
}

var (
	nsOnce sync.Once
	nsErr  error
)

// NamespacesAvailable reports whether this host lets an unprivileged process
// create a user + mount namespace and make a read-only bind mount in it.
func NamespacesAvailable() error {
	nsOnce.Do(func() {
		dir, err := os.MkdirTemp("", "hoh-ns-probe-*")
		if err != nil {
			nsErr = err
			return
		}
		defer os.RemoveAll(dir)
		out, err := exec.Command("unshare", "--user", "--map-root-user", "--mount", "--", "/bin/sh", "-c",
			roScript, "hoh-ro", dir, "--", "true").CombinedOutput()
		if err != nil {
			nsErr = fmt.Errorf("sandbox: user + mount namespaces unavailable (unshare --user --map-root-user --mount: %v: %s); "+
				"host role views need them (util-linux's unshare, kernel.unprivileged_userns_clone=1)", err, out)
		}
	})
	return nsErr
}
