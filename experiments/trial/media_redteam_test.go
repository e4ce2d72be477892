package trial

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/runrecord"
)

// Red-team: a QA Tester cites, as screenshots, host files outside its view
// (/etc/shadow, a root-only file), links the Developer planted in the
// artifact (to that file, to /dev/zero) and /dev/zero itself. Each claim
// resting on them is a gap with a note; nothing of those files (size,
// digest, content) is recorded; the trial finishes (no endless read); and
// no link leaving the trial directory is left in it.
func TestRedTeamQACitesHostFilesAndPlantedLinks(t *testing.T) {
	secretDir := t.TempDir() // outside the run directory; /tmp is hidden from roles
	secret := filepath.Join(secretDir, "root-only")
	const secretText = "ROOT-ONLY-SECRET-1f3a"
	if err := os.WriteFile(secret, []byte(secretText), 0o600); err != nil {
		t.Fatal(err)
	}
	h := &fakeHarness{devShell: fmt.Sprintf("ln -s %s frame.png && ln -s /dev/zero zero.png && ln -s /etc shots", secret)}
	rec := func(id, path string) string {
		return fmt.Sprintf(`{"claim_id":%q,"claim":"looks right","status":"verified","execution_records":[{"type":"screenshot","path":%q,"observation":"fine"}]}`, id, path)
	}
	h.qaReply = `{"iteration":1,"qa_status":"pass","verified_records":[` + strings.Join([]string{
		rec("shadow", "/etc/shadow"), rec("rootonly", secret), rec("planted", "frame.png"), rec("devzero", "/dev/zero"),
		rec("zerolink", "zero.png"), rec("dirlink", "shots/shadow"), rec("climb", "../../../../../../.."+secret),
		`{"claim_id":"mixed","claim":"greets Ada","status":"verified","execution_records":[{"type":"command","command":"sh greet.sh Ada","observation":"Hello, Ada!"},{"type":"screenshot","path":"frame.png","observation":"a greeting"}]}`,
	}, ",") + `],"gap_records":[]}`
	dir := t.TempDir()
	s, err := runIn(dir, "hoh@1", h)
	if err != nil {
		t.Fatal(err)
	}
	if h.devShellErr != nil {
		t.Fatalf("the Developer's links: %v", h.devShellErr)
	}
	if s.Status != runrecord.StatusCompleted {
		t.Fatalf("status %s: %s", s.Status, s.Reason)
	}
	l := runrecord.TrialLayout{Dir: dir}
	var ev runrecord.Evidence
	if err := runrecord.ReadJSON(l.StageFiles(1, "qa").Evidence(), &ev); err != nil {
		t.Fatal(err)
	}
	gaps := map[string]bool{}
	for _, c := range ev.Gaps {
		gaps[c.ClaimID] = true
	}
	for _, id := range []string{"shadow", "rootonly", "planted", "devzero", "zerolink", "dirlink", "climb"} {
		if !gaps[id] {
			t.Errorf("claim %s is not a gap: verified %+v", id, ev.Verified)
		}
	}
	if len(ev.Media) != 0 {
		t.Errorf("media manifest records files outside the view: %+v", ev.Media)
	}
	notes := strings.Join(ev.Notes, "\n")
	if !strings.Contains(notes, `"/etc/shadow" (is not in the role's view)`) || !strings.Contains(notes, `"frame.png" (`) {
		t.Errorf("the notes do not say why: %s", notes)
	}
	// No size, digest or content of the host files anywhere in the run.
	var forbidden []string
	for _, p := range []string{secret, "/etc/shadow"} {
		if b, err := os.ReadFile(p); err == nil {
			sum := sha256.Sum256(b)
			forbidden = append(forbidden, hex.EncodeToString(sum[:]))
		}
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		b, _ := os.ReadFile(p)
		for _, f := range append(forbidden, secretText) {
			if strings.Contains(string(b), f) {
				t.Errorf("%s holds %q of a host file", p, f)
			}
		}
		return nil
	})
	if out := testenv.LinksLeaving(dir); len(out) != 0 {
		t.Errorf("links leaving the trial directory: %v", out)
	}
	// The artifact in the history keeps what the Developer made.
	if got := testenv.GitShow(t, l.GitDir(), "cp-1:frame.png"); got != secret {
		t.Errorf("cp-1:frame.png is %q, want the link as the Developer left it", got)
	}
}

// In a task container the QA Tester's paths are the exchange's: a cited
// path resolves through the invocation's mounts to the retained candidate,
// and a path of the container or of the host (/etc/passwd, /etc/shadow) is
// never read from the host.
func TestContainerQACitationsResolveInTheExchangeOnly(t *testing.T) {
	trialDir := t.TempDir()
	candidate := filepath.Join(trialDir, "iter-01", "qa", "candidate")
	if err := os.MkdirAll(candidate, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(candidate, "frame.png"), []byte("PNG"), 0o644)
	os.Symlink("/etc/passwd", filepath.Join(candidate, "link.png"))
	view := filepath.Join(trialDir, "agent-view", "inputs", "candidate")
	mounts := []sandbox.Mount{{Source: candidate, Target: view}}
	claim := func(id, path string) runrecord.Claim {
		return runrecord.Claim{ClaimID: id, Claim: "c", Status: "verified",
			ExecutionRecords: []runrecord.ExecutionRecord{{Type: "screenshot", Path: path, Observation: "seen"}}}
	}
	report := runrecord.QAReport{VerifiedRecords: []runrecord.Claim{claim("view", filepath.Join(view, "frame.png")), claim("rel", "frame.png"),
		claim("passwd", "/etc/passwd"), claim("shadow", "/etc/shadow"), claim("link", filepath.Join(view, "link.png"))}}
	notes := checkMedia(context.Background(), &report, candidate, mounts)
	var kept, gaps []string
	for _, c := range report.VerifiedRecords {
		kept = append(kept, c.ClaimID)
	}
	for _, c := range report.GapRecords {
		gaps = append(gaps, c.ClaimID)
	}
	if strings.Join(kept, ",") != "view,rel" || strings.Join(gaps, ",") != "passwd,shadow,link" {
		t.Fatalf("kept %v, gaps %v (notes %v)", kept, gaps, notes)
	}
	ev := runrecord.Evidence{Verified: report.VerifiedRecords, Gaps: report.GapRecords}
	media, err := mediaManifest(context.Background(), trialDir, filepath.Join(trialDir, "none"), candidate, &ev, mounts)
	if err != nil {
		t.Fatal(err)
	}
	if len(media) != 1 || media[0].Path != filepath.Join("iter-01", "qa", "candidate", "frame.png") || media[0].Bytes != 3 {
		t.Fatalf("media %+v, want only the candidate's frame", media)
	}
}

// On the host QA's candidate is the workspace itself: a screenshot QA
// cites there is kept as a copy of its own in the stage's folder, so the
// next Developer's rewrite of the file does not change what E_t recorded.
func TestQACitedMediaInTheWorkspaceAreKeptAsCopies(t *testing.T) {
	h := &fakeHarness{devShell: `printf 'frame of %s' "$(date +%s%N)" > frame.png`}
	h.qaReply = `{"iteration":1,"qa_status":"pass","verified_records":[` +
		`{"claim_id":"shot","claim":"greets","status":"verified","execution_records":[{"type":"command","command":"sh greet.sh Ada","observation":"Hello, Ada!"},` +
		`{"type":"screenshot","path":"frame.png","observation":"a greeting"}]}],"gap_records":[]}`
	dir := t.TempDir()
	s, err := runIn(dir, "hoh@2", h)
	if err != nil || s.Status != runrecord.StatusCompleted {
		t.Fatalf("%v %+v", err, s)
	}
	l := runrecord.TrialLayout{Dir: dir}
	var ev runrecord.Evidence
	if err := runrecord.ReadJSON(l.StageFiles(1, "qa").Evidence(), &ev); err != nil {
		t.Fatal(err)
	}
	if len(ev.Media) != 1 || ev.Media[0].Path != filepath.Join("iter-01", "qa", "candidate", "frame.png") {
		t.Fatalf("media %+v, want iteration 1's frame.png kept under its candidate", ev.Media)
	}
	kept := filepath.Join(dir, ev.Media[0].Path)
	b, err := os.ReadFile(kept)
	sum := sha256.Sum256(b)
	if err != nil || hex.EncodeToString(sum[:]) != ev.Media[0].SHA256 {
		t.Fatalf("the kept copy (%v) is not what E_t recorded", err)
	}
	if got := testenv.GitShow(t, l.GitDir(), "cp-1:frame.png"); got != string(b) {
		t.Errorf("kept %q, but cp-1's frame.png is %q", b, got)
	}
	if now, _ := os.ReadFile(filepath.Join(l.Workspace(), "frame.png")); string(now) == string(b) {
		t.Errorf("the Developer of iteration 2 did not rewrite frame.png (%q): the test shows nothing", now)
	}
	if names, _ := os.ReadDir(filepath.Dir(kept)); len(names) != 1 {
		t.Errorf("the candidate's place keeps %d entries, want the one copy", len(names))
	}
}
