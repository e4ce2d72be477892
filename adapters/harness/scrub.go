package harness

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
	var needles [][]byte
	for _, s := range secrets {
		if len(s) >= 4 { // shorter values would redact ordinary text
			needles = append(needles, []byte(s))
		}
	}
	if len(needles) == 0 {
		return nil
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		found := false
		for _, n := range needles {
			if bytes.Contains(data, n) {
				found = true
			}
		}
		if !found {
			return nil
		}
		if binaryFile(p, data) {
			return maskInPlace(p, data, needles)
		}
		for _, n := range needles {
			data = bytes.ReplaceAll(data, n, []byte(Redacted))
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return writeAtomic(p, data, info.Mode().Perm())
	})
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
