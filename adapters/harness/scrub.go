package harness

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hoh-research/hoh/adapters/fileid"
	"github.com/hoh-research/hoh/internal/fstree"
)

// Redacted replaces secret values in files written by hoh and by the CLIs.
const Redacted = "[REDACTED]"

// ScrubSecrets removes the secret values from every regular file under root.
// CLIs write their own state (shell snapshots with the environment, caches,
// databases) where hoh cannot stop them; this is the last line that keeps
// keys out of run records. A text file is rewritten atomically with each
// occurrence replaced by Redacted. A binary file (a database, its WAL) is
// never given a different length or layout: each occurrence is overwritten
// in place by as many '*' bytes, so SQLite's pages and records stay intact
// (replacing a 21-byte key by the 10-byte Redacted corrupted Codex's
// thread_history_1.sqlite).
func ScrubSecrets(root string, secrets []string) error {
	_, err := ScrubFound(root, secrets)
	return err
}

// ScrubFound is ScrubSecrets reporting the files (relative to root) it
// found a secret in. Files are first searched as a stream, data segments
// only (a sparse file's holes are skipped, and no file is read whole into
// memory to be searched); a file too large to rewrite is masked in place.
func ScrubFound(root string, secrets []string) ([]string, error) {
	return (&SecretScan{Secrets: secrets}).Found(root)
}

// SecretScan is ScrubFound for trees scanned again and again (a trial's
// workspace, once per stage): a file it found clean is not read again while
// its fileid.ID is unchanged, so a scan costs a walk plus the files that
// changed. Content belongs to the inode, so a hard link to a file found
// clean (hoh's read-only snapshots of the workspace) is clean wherever it
// is. A file changed within racyWindow of a scan is read again next time.
type SecretScan struct {
	Secrets []string

	clean map[fileid.ID]bool
	// opened counts the files read, for tests.
	opened int
}

// racyWindow is how recent a file's change may be for a scan to read it
// again next time whatever its ID says.
const racyWindow = time.Second

// Found scrubs every regular file under root that changed since this scan
// last found it clean, and returns those it found a secret in (relative
// to root).
func (s *SecretScan) Found(root string) ([]string, error) {
	needles := secretNeedles(s.Secrets)
	if len(needles) == 0 {
		return nil, nil
	}
	var found []string
	err := fstree.Walk(root, func(rel string, info fs.FileInfo) (bool, error) {
		hit, err := s.file(root, rel, info, needles)
		if hit {
			found = append(found, rel)
		}
		return true, err
	})
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Lstat(root); os.IsNotExist(serr) {
			return nil, nil // no tree, nothing kept
		}
	}
	return found, err
}

// File is Found for one entry of a walk the caller makes (rel under root,
// info its lstat): whether it held a secret, now redacted. A caller
// walking the tree anyway need not walk it again for the scan.
func (s *SecretScan) File(root, rel string, info fs.FileInfo) (bool, error) {
	needles := secretNeedles(s.Secrets)
	if len(needles) == 0 {
		return false, nil
	}
	return s.file(root, rel, info, needles)
}

func (s *SecretScan) file(root, rel string, info fs.FileInfo, needles [][]byte) (bool, error) {
	if !info.Mode().IsRegular() {
		return false, nil
	}
	if s.clean == nil {
		s.clean = map[fileid.ID]bool{}
	}
	id, known := fileid.Of(info)
	if known && s.clean[id] {
		return false, nil
	}
	start := time.Now()
	s.opened++
	p := filepath.Join(root, rel)
	hit, err := containsAny(p, info.Size(), needles)
	if err != nil || !hit {
		if err == nil && known && id.Settled(start, racyWindow) {
			s.clean[id] = true
		}
		return false, err
	}
	return true, redactFile(p, info, needles)
}

// secretNeedles are the values to search for; shorter values would redact
// ordinary text.
func secretNeedles(secrets []string) [][]byte {
	var needles [][]byte
	for _, s := range secrets {
		if len(s) >= 4 {
			needles = append(needles, []byte(s))
		}
	}
	return needles
}

// redactFile replaces each needle in the file at p: a large one is masked
// in place as a stream, a binary one in place, a text one rewritten.
func redactFile(p string, info fs.FileInfo, needles [][]byte) error {
	if info.Size() > maxRewrite {
		return maskStream(p, info.Size(), needles)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	if binaryFile(p, data) {
		return maskInPlace(p, data, needles)
	}
	for _, n := range needles {
		data = bytes.ReplaceAll(data, n, []byte(Redacted))
	}
	return writeAtomic(p, data, info.Mode().Perm())
}

// maxRewrite is the largest file scrubbed by rewriting it; a larger one
// is masked in place.
const maxRewrite = 64 << 20

const scanChunk = 1 << 20

// segments calls fn for each data segment [off, end) of f (the whole file
// where the file system cannot tell holes).
func segments(f *os.File, size int64, fn func(off, end int64) error) error {
	const seekData, seekHole = 3, 4
	for off := int64(0); off < size; {
		data, err := f.Seek(off, seekData)
		if err != nil {
			if off == 0 {
				return fn(0, size) // no SEEK_DATA: all of it
			}
			return nil // ENXIO: no data after off
		}
		hole, err := f.Seek(data, seekHole)
		if err != nil {
			hole = size
		}
		if err := fn(data, hole); err != nil {
			return err
		}
		off = hole
	}
	return nil
}

// window reads [off, end) of f in chunks that overlap by the longest
// needle, calling fn with each chunk and its offset.
func window(f *os.File, off, end int64, overlap int, fn func(buf []byte, at int64) bool) error {
	// Small files get small buffers: a 1 MiB one per file made a scan of
	// 20,000 small files mostly zeroing memory.
	buf := make([]byte, min(int64(scanChunk+overlap), end-off))
	for at := off; at < end; {
		n := int64(len(buf))
		if end-at < n {
			n = end - at
		}
		got, err := f.ReadAt(buf[:n], at)
		if got > 0 && fn(buf[:got], at) {
			return nil
		}
		if err != nil && err != io.EOF {
			return err
		}
		if got <= overlap || at+int64(got) >= end {
			return nil
		}
		at += int64(got - overlap)
	}
	return nil
}

func longest(needles [][]byte) int {
	m := 0
	for _, n := range needles {
		m = max(m, len(n))
	}
	return m
}

// containsAny reports whether the file holds any needle.
func containsAny(p string, size int64, needles [][]byte) (bool, error) {
	f, err := os.Open(p)
	if err != nil {
		return false, err
	}
	defer f.Close()
	hit := false
	overlap := longest(needles) - 1
	err = segments(f, size, func(off, end int64) error {
		if hit {
			return nil
		}
		return window(f, off, end, overlap, func(buf []byte, _ int64) bool {
			for _, n := range needles {
				if bytes.Contains(buf, n) {
					hit = true
				}
			}
			return hit
		})
	})
	return hit, err
}

// maskStream overwrites each occurrence in a large file with '*' bytes.
func maskStream(p string, size int64, needles [][]byte) error {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	overlap := longest(needles) - 1
	var werr error
	err = segments(f, size, func(off, end int64) error {
		return window(f, off, end, overlap, func(buf []byte, at int64) bool {
			for _, n := range needles {
				mask := bytes.Repeat([]byte("*"), len(n))
				for i := 0; ; {
					j := bytes.Index(buf[i:], n)
					if j < 0 {
						break
					}
					if _, err := f.WriteAt(mask, at+int64(i+j)); err != nil {
						werr = err
						return true
					}
					i += j + len(n)
				}
			}
			return false
		})
	})
	if err == nil {
		err = werr
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// binaryFile: a database by name, or any file with a NUL byte.
func binaryFile(p string, data []byte) bool {
	for _, suffix := range []string{".db", ".sqlite", ".sqlite3", "-wal", "-shm", "-journal"} {
		if strings.HasSuffix(p, suffix) {
			return true
		}
	}
	return bytes.IndexByte(data, 0) >= 0
}

// maskInPlace overwrites each occurrence with '*' bytes at its offset,
// touching nothing else of the file.
func maskInPlace(p string, data []byte, needles [][]byte) error {
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	for _, n := range needles {
		mask := bytes.Repeat([]byte("*"), len(n))
		for off := 0; ; {
			i := bytes.Index(data[off:], n)
			if i < 0 {
				break
			}
			if _, err := f.WriteAt(mask, int64(off+i)); err != nil {
				f.Close()
				return err
			}
			off += i + len(n)
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeAtomic replaces p by data through a temporary file, so a full disk
// never leaves p truncated.
func writeAtomic(p string, data []byte, perm fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(p), ".scrub-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), perm)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
