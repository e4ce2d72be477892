package trial

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/runrecord"
)

// mediaExt are the files a media manifest lists.
var mediaExt = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true, ".bmp": true,
	".mp4": true, ".webm": true, ".mkv": true, ".avi": true}

// mediaRecord: an execution record that claims to have looked at a frame or
// a recording.
func mediaRecord(x runrecord.ExecutionRecord) bool {
	return x.Type == "screenshot" || x.Type == "replay"
}

// hostPath resolves a path an agent wrote (a view path such as
// /workspace/frame.png, a host path, or one relative to its working
// directory dir) through the invocation's mounts; "" when it names nothing
// the QA Tester's view holds.
func hostPath(p, dir string, mounts []sandbox.Mount) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	p = filepath.Clean(p)
	best := -1
	for i, m := range mounts {
		t := filepath.Clean(m.Target)
		if (p == t || strings.HasPrefix(p, t+"/")) && (best < 0 || len(t) > len(filepath.Clean(mounts[best].Target))) {
			best = i
		}
	}
	if best < 0 {
		return p
	}
	m := mounts[best]
	if m.Source == "" {
		return "" // an empty tmpfs: nothing kept
	}
	return filepath.Join(m.Source, strings.TrimPrefix(p, filepath.Clean(m.Target)))
}

// checkMedia demotes verified claims backed only by screenshot or replay
// records whose file the QA Tester's view does not hold: nothing counts as
// looked at that was not captured. It returns the normalisation notes.
func checkMedia(report *runrecord.QAReport, dir string, mounts []sandbox.Mount) []string {
	var notes []string
	var kept []runrecord.Claim
	for _, c := range report.VerifiedRecords {
		backed, missing := false, []string{}
		for _, x := range c.ExecutionRecords {
			if !mediaRecord(x) {
				backed = true
				continue
			}
			if x.Path != "" {
				if hp := hostPath(x.Path, dir, mounts); hp != "" {
					if fi, err := os.Stat(hp); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
						backed = true
						continue
					}
				}
			}
			missing = append(missing, fmt.Sprintf("%s %q", x.Type, x.Path))
		}
		if backed {
			kept = append(kept, c)
			continue
		}
		notes = append(notes, fmt.Sprintf("claim %q cites only %s, which the QA Tester's view does not hold: recorded as gap", c.ClaimID, strings.Join(missing, ", ")))
		c.Status = "gap"
		report.GapRecords = append(report.GapRecords, c)
	}
	report.VerifiedRecords = kept
	return notes
}

// mediaManifest lists the frames and recordings under scratch (what the QA
// Tester left at the task's top level) and those its records cite, with what
// the records say each shows. Paths are relative to the trial directory.
func mediaManifest(trialDir, scratch, dir string, ev *runrecord.Evidence, mounts []sandbox.Mount) ([]runrecord.MediaItem, error) {
	items := map[string]*runrecord.MediaItem{}
	add := func(host, view string) (*runrecord.MediaItem, error) {
		if it, ok := items[host]; ok {
			if it.ViewPath == "" {
				it.ViewPath = view
			}
			return it, nil
		}
		f, err := os.Open(host)
		if err != nil {
			return nil, nil // cited but absent: its claim is a gap already
		}
		defer f.Close()
		h := sha256.New()
		n, err := io.Copy(h, f)
		if err != nil {
			return nil, err
		}
		rel, err := filepath.Rel(trialDir, host)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = host
		}
		it := &runrecord.MediaItem{Path: rel, ViewPath: view, Bytes: n, SHA256: hex.EncodeToString(h.Sum(nil))}
		items[host] = it
		return it, nil
	}
	for _, claims := range [][]runrecord.Claim{ev.Verified, ev.Gaps} {
		for _, c := range claims {
			for _, x := range c.ExecutionRecords {
				if x.Path == "" || !(mediaRecord(x) || mediaExt[strings.ToLower(filepath.Ext(x.Path))]) {
					continue
				}
				hp := hostPath(x.Path, dir, mounts)
				if hp == "" {
					continue
				}
				it, err := add(hp, x.Path)
				if err != nil {
					return nil, err
				}
				if it != nil {
					it.Shows = append(it.Shows, x.Observation)
					it.Claims = append(it.Claims, c.ClaimID)
				}
			}
		}
	}
	err := filepath.WalkDir(scratch, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() && mediaExt[strings.ToLower(filepath.Ext(p))] {
			_, err := add(p, "")
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]runrecord.MediaItem, 0, len(items))
	for _, it := range items {
		out = append(out, *it)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}
