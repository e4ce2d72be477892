// Package fileid names a version of a file by its stat data, so that hoh
// reads a file again (to digest it, to scan it for secrets) only when it
// changed: a write changes its mtime and ctime, a rename or replacement its
// inode, and no process can set a ctime (utimes sets mtime only; the clock
// needs CAP_SYS_TIME), so restoring a timestamp does not hide a change.
package fileid

import (
	"io/fs"
	"syscall"
	"time"
)

// ID is a file's identity and change times, in nanoseconds.
type ID struct {
	Dev, Ino     uint64
	Size         int64
	Mode         fs.FileMode
	Mtime, Ctime int64
}

// Of is the ID of info (false where the system gives no stat data).
func Of(info fs.FileInfo) (ID, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return ID{}, false
	}
	return ID{Dev: uint64(st.Dev), Ino: st.Ino, Size: st.Size, Mode: info.Mode(),
		Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}, true
}

// Settled reports whether the file last changed more than window before
// now. Only a settled ID may be remembered: the kernel's clock is coarse,
// so a write in the same tick as hoh's read could keep both times, as git
// treats its racily clean entries.
func (id ID) Settled(now time.Time, window time.Duration) bool {
	return now.Sub(time.Unix(0, max(id.Mtime, id.Ctime))) > window
}
