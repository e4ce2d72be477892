package harness

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
)

// Redacted replaces secret values in files written by hoh and by the CLIs.
const Redacted = "[REDACTED]"

// ScrubSecrets rewrites every regular file under root that contains one of
// the secret values, replacing each occurrence with Redacted. CLIs write their
// own state (shell snapshots with the environment, caches) where hoh cannot
// stop them; this is the last line that keeps keys out of run records.
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
		changed := false
		for _, n := range needles {
			if bytes.Contains(data, n) {
				data = bytes.ReplaceAll(data, n, []byte(Redacted))
				changed = true
			}
		}
		if !changed {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(p, data, info.Mode().Perm())
	})
}
