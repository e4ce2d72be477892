package fstree

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ReadDir lists dir's entries with their lstat, each stat taken relative
// to dir's open descriptor (fstatat). os.Lstat of each full path resolves
// every component again: on a 20,000-file workspace that doubled the cost
// of a walk, and hoh walks a workspace several times per stage (issue 42).
// An entry removed between the listing and its stat is left out. The
// order is the directory's own.
func ReadDir(dir string) ([]fs.FileInfo, error) {
	return readDir(dir, 0)
}

// readDir is ReadDir; flags are added to open's (O_NOFOLLOW for a
// directory met in a walk, which must not have become a symbolic link).
func readDir(dir string, flags int) ([]fs.FileInfo, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|flags, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	f := os.NewFile(uintptr(fd), dir)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	// One allocation for the directory's stats, not one per entry.
	stats := make([]statInfo, 0, len(names))
	for _, name := range names {
		var st unix.Stat_t
		err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.ENOENT {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "lstat", Path: filepath.Join(dir, name), Err: err}
		}
		stats = append(stats, statInfo{name: name, st: sysStat(&st)})
	}
	infos := make([]fs.FileInfo, len(stats))
	for i := range stats {
		infos[i] = &stats[i]
	}
	return infos, nil
}

// Walk calls fn for every entry under root (not root itself), parents
// before their entries, with its path relative to root and its lstat.
// fn's descend says whether to walk into a directory. A directory that
// cannot be read ends the walk with its error; one removed since it was
// listed is passed over. No descriptor is held
// across the walk of a subdirectory, so depth costs no open files.
func Walk(root string, fn func(rel string, info fs.FileInfo) (descend bool, err error)) error {
	return walk(root, "", fn)
}

func walk(dir, rel string, fn func(string, fs.FileInfo) (bool, error)) error {
	flags := unix.O_NOFOLLOW
	if rel == "" {
		flags = 0 // root may be reached through a link, as WalkDir's is
	}
	infos, err := readDir(dir, flags)
	if rel != "" && errors.Is(err, fs.ErrNotExist) {
		return nil // removed since it was listed, like any other entry
	}
	if err != nil {
		return err
	}
	for _, info := range infos {
		r := info.Name()
		if rel != "" {
			r = rel + string(filepath.Separator) + r
		}
		descend, err := fn(r, info)
		if err != nil {
			return err
		}
		if descend && info.IsDir() {
			if err := walk(filepath.Join(dir, info.Name()), r, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// statInfo is an fs.FileInfo from a stat taken by ReadDir, with the same
// Mode and Sys (*syscall.Stat_t) os.Lstat gives. os.SameFile knows only
// os's own FileInfo: compare Sys's Dev and Ino (SameFile here).
type statInfo struct {
	name string
	st   syscall.Stat_t
}

func (i *statInfo) Name() string       { return i.name }
func (i *statInfo) Size() int64        { return i.st.Size }
func (i *statInfo) IsDir() bool        { return i.Mode().IsDir() }
func (i *statInfo) Sys() any           { return &i.st }
func (i *statInfo) ModTime() time.Time { return time.Unix(i.st.Mtim.Unix()) }

func (i *statInfo) Mode() fs.FileMode {
	m := fs.FileMode(i.st.Mode & 0o777)
	switch i.st.Mode & syscall.S_IFMT {
	case syscall.S_IFBLK:
		m |= fs.ModeDevice
	case syscall.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	case syscall.S_IFIFO:
		m |= fs.ModeNamedPipe
	case syscall.S_IFLNK:
		m |= fs.ModeSymlink
	case syscall.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if i.st.Mode&syscall.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if i.st.Mode&syscall.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if i.st.Mode&syscall.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// sysStat is st as the syscall package's type, which os.Lstat's Sys gives
// and fileid reads: the same kernel structure, field by field.
func sysStat(st *unix.Stat_t) syscall.Stat_t {
	return syscall.Stat_t{
		Dev: st.Dev, Ino: st.Ino, Nlink: st.Nlink, Mode: st.Mode, Uid: st.Uid, Gid: st.Gid,
		Rdev: st.Rdev, Size: st.Size, Blksize: st.Blksize, Blocks: st.Blocks,
		Atim: syscall.Timespec(st.Atim), Mtim: syscall.Timespec(st.Mtim), Ctim: syscall.Timespec(st.Ctim),
	}
}

// SameFile reports whether a and b (from ReadDir, Walk or os.Lstat)
// describe the same file: the same device and inode.
func SameFile(a, b fs.FileInfo) bool {
	sa, ok := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return ok && ok2 && sa.Dev == sb.Dev && sa.Ino == sb.Ino
}
