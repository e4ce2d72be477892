package sandbox

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// A writable path of a view whose every entry root owns is shown through
// an idmapped mount instead of being chowned to the role's uid and back:
// the role sees root's files as its own, and what it writes is stored as
// root's. Nothing on disk changes owner, so no file's ctime changes except
// those the role wrote, and the digests, the secret scan and git read only
// those afterwards (with chowns every Developer stage re-read the whole
// workspace twice). Where the kernel or the file system has no idmapped
// mounts, or an entry has another owner, the path is chowned as before.

// holdArg marks a re-execution of this binary that only holds a user
// namespace open until its input closes.
const holdArg = "-hoh-sandbox-hold-userns"

var roleMapping struct {
	once sync.Once
	fd   int
	err  error
}

// roleMappingNS is a user namespace mapping uid and gid 0 to RoleUID, held
// open for hoh's lifetime: an idmapped mount through it shows what root
// owns as the role's.
func roleMappingNS() (int, error) {
	roleMapping.once.Do(func() {
		roleMapping.fd, roleMapping.err = holdUserNS()
	})
	return roleMapping.fd, roleMapping.err
}

func holdUserNS() (int, error) {
	c := exec.Command("/proc/self/exe", holdArg)
	in, err := c.StdinPipe()
	if err != nil {
		return -1, err
	}
	c.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER, Pdeathsig: syscall.SIGKILL,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: RoleUID, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: RoleUID, Size: 1}}}
	if err := c.Start(); err != nil {
		return -1, fmt.Errorf("sandbox: user namespace for idmapped views: %w", err)
	}
	defer func() { in.Close(); _ = c.Wait() }()
	return unix.Open(fmt.Sprintf("/proc/%d/ns/user", c.Process.Pid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
}

// holdUntilEOF is the holder's whole life.
func holdUntilEOF() int {
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// idmappedTree is a detached copy of the mount tree at path (nosuid,
// nodev, read-only unless writable) through roleMappingNS, for the init to
// attach in the view.
func idmappedTree(path string, writable bool) (*os.File, error) {
	ns, err := roleMappingNS()
	if err != nil {
		return nil, err
	}
	tree, err := unix.OpenTree(unix.AT_FDCWD, path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
	if err != nil {
		return nil, err
	}
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV, Userns_fd: uint64(ns)}
	if !writable {
		attr.Attr_set |= unix.MOUNT_ATTR_RDONLY
	}
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
		unix.Close(tree)
		return nil, err
	}
	return os.NewFile(uintptr(tree), path), nil
}

// firstTreeFD is the init's descriptor of the first idmapped tree (after
// the status pipe and the gate).
const firstTreeFD = gateFD + 1

// mapWritable gives each bind of the writable path an idmapped tree of
// its own (an attached tree cannot be attached twice); false when the
// kernel or file system cannot, and nothing was changed.
func (p *viewPlan) mapWritable(path string) bool {
	var trees []*os.File
	var at []int
	for i, e := range p.entries {
		if e.Kind != kindBind || e.Source != path {
			continue
		}
		t, err := idmappedTree(path, e.Writable)
		if err != nil {
			for _, f := range trees {
				f.Close()
			}
			return false
		}
		trees, at = append(trees, t), append(at, i)
	}
	for k, i := range at {
		p.entries[i].Tree = firstTreeFD + len(p.trees) + k
	}
	p.trees = append(p.trees, trees...)
	return len(trees) > 0
}

// attachTree places the idmapped tree the init inherited as fd at t.
func attachTree(fd int, t string) error {
	defer unix.Close(fd)
	return unix.MoveMount(fd, "", unix.AT_FDCWD, t, unix.MOVE_MOUNT_F_EMPTY_PATH)
}
