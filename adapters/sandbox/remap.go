package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Mount shows Source at Target inside an invocation's namespace (a path a
// task addresses, like GameCraft's /workspace/game); read-only unless
// Writable. An empty Source is an empty private tmpfs at Target (a scratch
// /logs, or a host directory hidden).
type Mount struct {
	Source   string `json:"source,omitempty"`
	Target   string `json:"target"`
	Writable bool   `json:"writable,omitempty"`
}

// Remapped runs each command with Mounts applied, in order, inside the
// private mount namespace of a confined invocation: Inner is Confined or
// ReadOnlyView (their view applies first), or Local, which is confined with
// no view of its own. Nothing mounted here is seen outside the invocation.
// Targets are created on the host when missing (a directory at the file
// system's root, such as /workspace, needs the right to create it there).
type Remapped struct {
	Inner  Executor
	Mounts []Mount
}

// remapScript applies triples (source, target, rw|ro) up to "--", then execs
// the rest; exit 125 says the view could not be made. A read-only remount
// keeps nosuid and nodev, which the kernel may have locked on the original
// mount, and retries with noexec for a source on a noexec file system.
const remapScript = `while [ "$1" != -- ]; do
src=$1; tgt=$2; mode=$3; shift 3
if [ -z "$src" ]; then
  o=mode=0755; [ "$mode" = ro ] && o=ro,mode=0755
  mkdir -p "$tgt" && mount -t tmpfs -o "$o" hoh-view "$tgt" || exit 125
else
  if [ -d "$src" ]; then mkdir -p "$tgt"; else mkdir -p "$(dirname "$tgt")" && : >> "$tgt"; fi || exit 125
  mount --bind "$src" "$tgt" || exit 125
  if [ "$mode" = ro ]; then
    mount -o remount,bind,ro,nosuid,nodev "$tgt" 2>/dev/null || mount -o remount,bind,ro,nosuid,nodev,noexec "$tgt" || exit 125
  fi
fi
done
shift
cd "$(pwd -P)" && exec "$@"`

// Run implements Executor.
func (m Remapped) Run(ctx context.Context, cmd Command) (Exit, error) {
	if len(m.Mounts) == 0 {
		return m.Inner.Run(ctx, cmd)
	}
	if len(cmd.Args) == 0 {
		return Exit{Code: -1}, errors.New("sandbox: empty command")
	}
	args := []string{"/bin/sh", "-c", remapScript, "hoh-remap"}
	for _, mt := range m.Mounts {
		if !filepath.IsAbs(mt.Target) || (mt.Source != "" && !filepath.IsAbs(mt.Source)) {
			return Exit{Code: -1}, fmt.Errorf("sandbox: mount %s -> %s: paths must be absolute", mt.Source, mt.Target)
		}
		if err := hostMountPoint(mt.Target); err != nil {
			return Exit{Code: -1}, err
		}
		mode := "ro"
		if mt.Writable {
			mode = "rw"
		}
		args = append(args, mt.Source, filepath.Clean(mt.Target), mode)
	}
	cmd.Args = append(append(args, "--"), cmd.Args...)
	switch in := m.Inner.(type) {
	case nil:
		return Confined{Inner: Local{}}.Run(ctx, cmd)
	case Local:
		return Confined{Inner: in}.Run(ctx, cmd)
	case Confined, ReadOnlyView:
		return in.Run(ctx, cmd)
	}
	return Exit{Code: -1}, fmt.Errorf("sandbox: mounts at fixed paths need a host executor, not %T", m.Inner)
}

// hostMountPoint makes sure the top-level directory of target exists on the
// host (the namespace mounts onto it; below it everything is the view's).
func hostMountPoint(target string) error {
	parts := strings.Split(strings.TrimPrefix(filepath.Clean(target), "/"), "/")
	top := "/" + parts[0]
	if _, err := os.Stat(top); err == nil {
		return nil
	}
	if err := os.Mkdir(top, 0o755); err != nil && !os.IsExist(err) {
		return fmt.Errorf("sandbox: the task's agents see %s, which needs the mount point %s on this host: %w (create it once: sudo mkdir -p %s)", target, top, err, top)
	}
	return nil
}
