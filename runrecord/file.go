package runrecord

// How records reach the disk: files written atomically (temp file + rename)
// and append-only JSON Lines logs that survive a crash with at most a torn
// last line, which readers skip and report.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// WriteFile writes data to path atomically.
func WriteFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// WriteJSON writes v as indented JSON atomically.
func WriteJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return WriteFile(path, append(data, '\n'))
}

// ReadJSON reads a JSON file into v; errors name the file.
func ReadJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: corrupt record: %w", path, err)
	}
	return nil
}

// Append adds one JSON line to path and syncs it, so a line that was
// appended survives a crash.
func Append(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadLines decodes a JSON Lines file with decode called per line. A torn
// last line (no trailing newline: the writer died mid-append) is dropped and
// reported through torn; a corrupt line elsewhere is an error naming it.
func ReadLines(path string, decode func(line []byte) error) (torn bool, err error) {
	return ReadNumberedLines(path, func(_ int, line []byte) error { return decode(line) })
}

// ReadNumberedLines is ReadLines with each line's number (from 1).
func ReadNumberedLines(path string, decode func(n int, line []byte) error) (torn bool, err error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		torn = true
		if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
			data = data[:i+1]
		} else {
			data = nil
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if err := decode(n, sc.Bytes()); err != nil {
			return torn, fmt.Errorf("%s:%d: corrupt record: %w", path, n, err)
		}
	}
	return torn, sc.Err()
}

// writeJSONLines rewrites path atomically with one JSON line per item.
func writeJSONLines[T any](path string, items []T) error {
	var buf bytes.Buffer
	for _, it := range items {
		line, err := json.Marshal(it)
		if err != nil {
			return err
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return WriteFile(path, buf.Bytes())
}

// readJSONLines decodes every line of a JSON Lines file (ReadLines: a
// missing file is empty, a torn last line is dropped, a corrupt line is an
// error naming it).
func readJSONLines[T any](path string) ([]T, error) {
	var out []T
	_, err := ReadLines(path, func(b []byte) error {
		var v T
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	return out, err
}
