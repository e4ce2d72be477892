// Package fstree is hoh's one file-tree copy. Its policy, for every caller:
//   - regular files are cloned (FICLONE) where the file system shares
//     extents (btrfs, XFS), else copied extent by extent (SEEK_DATA /
//     SEEK_HOLE with copy_file_range), so a sparse file stays sparse and a
//     copy allocates what the source allocates;
//   - with Options.Link, regular files are hard links instead (a snapshot in
//     no time and no space), for views nothing can write through: a
//     read-only mount, or one where any write is detected by a digest and
//     undone from the history;
//   - modes keep the permission bits only (setuid, setgid and sticky
//     dropped), plus Options.DirBits / FileBits;
//   - symlinks are copied as links, never followed; devices, FIFOs and
//     sockets are skipped (git does not record them either);
//   - top-level entries named in Options.Skip are left out.
package fstree

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// Options select what Copy does beyond the policy above.
type Options struct {
	Skip     []string    // top-level entries of src not copied
	Link     bool        // hard-link regular files (copy where a link fails)
	DirBits  fs.FileMode // or-ed into every directory's mode
	FileBits fs.FileMode // or-ed into every copied file's mode
}

// Copy copies src (a directory or a single file) to dst, creating dst's
// parents as needed.
func Copy(src, dst string, o Options) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if filepath.Dir(p) == src && slices.Contains(o.Skip, d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			return os.Symlink(link, target)
		case info.IsDir():
			return os.MkdirAll(target, info.Mode().Perm()|o.DirBits)
		case !info.Mode().IsRegular():
			return nil
		}
		if p == src { // a single file
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
		}
		if o.Link && os.Link(p, target) == nil {
			return nil
		}
		return CopyFile(p, target, info.Mode().Perm()|o.FileBits)
	})
}

// CopyFile copies one regular file by the policy above (clone, else its data
// extents only), creating dst with perm.
func CopyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if err := copyData(in, out); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func copyData(in, out *os.File) error {
	if unix.IoctlFileClone(int(out.Fd()), int(in.Fd())) == nil {
		return nil
	}
	st, err := in.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	for off := int64(0); off < size; {
		data, err := unix.Seek(int(in.Fd()), off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			break // only a hole is left
		}
		if err != nil { // no SEEK_DATA here: copy every byte
			return plainCopy(in, out, off)
		}
		hole, err := unix.Seek(int(in.Fd()), data, unix.SEEK_HOLE)
		if err != nil {
			return plainCopy(in, out, off)
		}
		if err := copyRange(in, out, data, hole-data); err != nil {
			return err
		}
		off = hole
	}
	// The file ends in a hole: give it its size without allocating.
	return out.Truncate(size)
}

// copyRange copies n bytes at off, in the kernel where it can.
func copyRange(in, out *os.File, off, n int64) error {
	for n > 0 {
		roff, woff := off, off
		c, err := unix.CopyFileRange(int(in.Fd()), &roff, int(out.Fd()), &woff, int(min(n, 1<<30)), 0)
		if err != nil || c == 0 {
			w := io.NewOffsetWriter(out, off)
			_, err := io.Copy(w, io.NewSectionReader(in, off, n))
			return err
		}
		off, n = off+int64(c), n-int64(c)
	}
	return nil
}

func plainCopy(in, out *os.File, off int64) error {
	_, err := io.Copy(io.NewOffsetWriter(out, off), io.NewSectionReader(in, off, 1<<62))
	return err
}
