package viewer

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hoh-research/hoh/runrecord"
)

// A record citing a frame by its path in the QA Tester's view links the
// copy the evidence's media manifest says is kept in the trial; a path the
// manifest does not list and that is outside the trial is never linked.
func TestViewPathsOfFramesResolveThroughTheMediaManifest(t *testing.T) {
	dir := t.TempDir()
	kept := filepath.Join("iter-01", "qa", "view-workspace", "title.png")
	os.MkdirAll(filepath.Join(dir, filepath.Dir(kept)), 0o755)
	os.WriteFile(filepath.Join(dir, kept), []byte("png"), 0o644)
	it := iterationRecords{Evidence: &runrecord.Evidence{Media: []runrecord.MediaItem{{Path: kept, ViewPath: "/workspace/title.png"}}}}
	if got, ok := keptFile(dir, it, "/workspace/title.png"); !ok || got != filepath.ToSlash(kept) {
		t.Fatalf("view path: %q %v, want %q", got, ok, kept)
	}
	if got, ok := keptFile(dir, it, "/workspace/other.png"); ok {
		t.Fatalf("a path outside the trial and the manifest was linked: %q", got)
	}
}
