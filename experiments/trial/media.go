package trial

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/internal/agentpath"
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

// mediaView is what the QA Tester could see, for resolving the paths its
// records cite (agentpath: within the view only, never through a link,
// regular files of bounded size): its working directory (the candidate)
// and the invocation's fixed task paths or exchange mounts.
func mediaView(dir string, mounts []sandbox.Mount) agentpath.View {
	var v agentpath.View
	over := false // a mount on the working directory itself (a direct view)
	for _, m := range mounts {
		if m.Source != "" { // an empty tmpfs keeps nothing
			v.Roots = append(v.Roots, agentpath.Root{View: m.Target, Host: m.Source})
			over = over || filepath.Clean(m.Target) == filepath.Clean(dir)
		}
	}
	if !over {
		v.Roots = append([]agentpath.Root{{View: dir, Host: dir}}, v.Roots...)
	}
	return v
}

// checkMedia demotes verified claims backed only by screenshot or replay
// records whose file the QA Tester's view does not hold: nothing counts as
// looked at that was not captured. It returns the normalisation notes.
func checkMedia(ctx context.Context, report *runrecord.QAReport, dir string, mounts []sandbox.Mount) []string {
	view := mediaView(dir, mounts)
	var notes []string
	var kept []runrecord.Claim
	for _, c := range report.VerifiedRecords {
		backed, missing := false, []string{}
		for _, x := range c.ExecutionRecords {
			if !mediaRecord(x) {
				backed = true
				continue
			}
			why := "no path"
			if x.Path != "" {
				d, err := view.Check(ctx, x.Path, dir, nil)
				if err == nil && d.Bytes > 0 {
					backed = true
					continue
				}
				why = "empty"
				if err != nil {
					why = refusalText(err)
				}
			}
			missing = append(missing, fmt.Sprintf("%s %q (%s)", x.Type, x.Path, why))
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

// refusalText is why a cited file was not read, without its path (the
// note quotes it already).
func refusalText(err error) string {
	var r *agentpath.Refusal
	if errors.As(err, &r) {
		return strings.TrimSpace(r.Why)
	}
	return "unreadable"
}

// mediaManifest lists the frames and recordings under scratch (what the QA
// Tester left at the task's top level) and those its records cite, with what
// the records say each shows. Paths are relative to the trial directory.
func mediaManifest(ctx context.Context, trialDir, scratch, dir string, ev *runrecord.Evidence, mounts []sandbox.Mount) ([]runrecord.MediaItem, error) {
	items := map[string]*runrecord.MediaItem{}
	add := func(view agentpath.View, p, cwd, cited string) *runrecord.MediaItem {
		res, err := view.Resolve(p, cwd)
		if err != nil {
			return nil
		}
		host := res.Host()
		if it, ok := items[host]; ok {
			if it.ViewPath == "" {
				it.ViewPath = cited
			}
			return it
		}
		d, err := view.Check(ctx, p, cwd, nil)
		if err != nil {
			return nil // refused or absent: nothing of it is recorded
		}
		rel, err := filepath.Rel(trialDir, host)
		if err != nil || strings.HasPrefix(rel, "..") {
			return nil // hoh keeps only what lies in the trial directory
		}
		it := &runrecord.MediaItem{Path: rel, ViewPath: cited, Bytes: d.Bytes, SHA256: d.SHA256}
		items[host] = it
		return it
	}
	view := mediaView(dir, mounts)
	for _, claims := range [][]runrecord.Claim{ev.Verified, ev.Gaps} {
		for _, c := range claims {
			for _, x := range c.ExecutionRecords {
				if x.Path == "" || !(mediaRecord(x) || mediaExt[strings.ToLower(filepath.Ext(x.Path))]) {
					continue
				}
				if it := add(view, x.Path, dir, x.Path); it != nil {
					it.Shows = append(it.Shows, x.Observation)
					it.Claims = append(it.Claims, c.ClaimID)
				}
			}
		}
	}
	own := agentpath.View{Roots: []agentpath.Root{{View: scratch, Host: scratch}}}
	err := filepath.WalkDir(scratch, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() && mediaExt[strings.ToLower(filepath.Ext(p))] {
			add(own, p, scratch, "")
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
