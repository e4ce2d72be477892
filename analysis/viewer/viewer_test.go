package viewer

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/runrecord"
)

const hostile = `<script>window.hohPwned="MARK"</script><img src=x onerror=alert(1)>`

func testOpts(t testing.TB) Options {
	return Options{TableConfigDir: filepath.Join(testenv.RepoRoot(t), "configs", "paper"),
		Now: func() time.Time { return time.Unix(1700000000, 0) }}
}

func read(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Untrusted text from a plan, a diff and a log is shown as text: the raw
// markup never reaches a page, its escaped form does.
func TestUntrustedTextIsEscaped(t *testing.T) {
	dir := t.TempDir()
	trials := writeSynthRun(t, dir, synthOpts{Tasks: 1, Configs: []string{"cfg"}, Arms: []string{"hoh@2"}, History: true, Hostile: hostile})
	res, err := Build(dir, testOpts(t))
	if err != nil {
		t.Fatal(err)
	}
	page := read(t, filepath.Join(dir, ReportDir, "trials", trials[0].Key+".html"))
	for _, where := range []string{"PLAN", "DIFF", "LOG"} {
		raw := `<script>window.hohPwned="` + where + `"</script>`
		if strings.Contains(page, raw) {
			t.Errorf("the %s's <script> reached the page unescaped", where)
		}
		if !strings.Contains(page, "&lt;script&gt;window.hohPwned=") || !strings.Contains(page, where) {
			t.Errorf("the %s's text is not shown escaped", where)
		}
	}
	if strings.Contains(page, "<img src=x") {
		t.Error("an <img> from untrusted text reached the page")
	}
	// The only scripts are the report's own.
	if n := strings.Count(page, "<script"); n != 1 {
		t.Errorf("%d <script> elements on the trial page, want 1 (assets/app.js)", n)
	}
	if idx := read(t, res.Index); strings.Count(idx, "<script") != 1 {
		t.Errorf("index has extra <script> elements")
	}
	// The diff is highlighted (chroma classes) and shows the added line.
	if !regexp.MustCompile(`class="c-[a-z0-9]+"`).MatchString(page) || !strings.Contains(page, `tr class="add"`) {
		t.Error("the diff is not rendered with highlighting and added lines")
	}
}

func TestGridDistinguishesStatesAndLinksTrials(t *testing.T) {
	dir := t.TempDir()
	trials := writeSynthRun(t, dir, synthOpts{Tasks: 10, Configs: []string{"cfg"}, Arms: []string{"vanilla", "hoh@2"}, Shapes: true})
	// Trial 18's replacement was superseded by a later clean attempt.
	f, err := os.OpenFile(runrecord.RunLayout{Dir: dir}.Replacements(), os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	line, _ := json.Marshal(runrecord.Replacement{Key: trials[18].Key, Dir: trials[18].Dir, Supersedes: true, Time: time.Unix(1700000100, 0)})
	f.Write(append(line, '\n'))
	f.Close()
	res, err := Build(dir, testOpts(t))
	if err != nil {
		t.Fatal(err)
	}
	idx := read(t, res.Index)
	cell := func(key string) string {
		m := regexp.MustCompile(`<td class="cell ([a-z ]+)" data-key="` + key + `"[^>]*>(.*?)</td>`).FindStringSubmatch(idx)
		if m == nil {
			t.Fatalf("no grid cell for trial %s", key)
		}
		return m[1] + "|" + m[2]
	}
	for i, tr := range trials {
		c := cell(tr.Key)
		switch i % 10 {
		case 7:
			if !strings.HasPrefix(c, "fail|") {
				t.Errorf("failed trial %d: cell %s", i, c)
			}
		case 8:
			if superseded := i == 18; strings.Contains(c, "replaced") == superseded {
				t.Errorf("replaced trial %d (superseded %v): cell %s", i, superseded, c)
			}
		case 9:
			if !strings.HasPrefix(c, "missing|") || strings.Contains(c, "href") {
				t.Errorf("missing trial %d: cell %s", i, c)
			}
		default:
			if !strings.HasPrefix(c, "ok|") || !strings.Contains(c, `href="trials/`+tr.Key+`.html"`) {
				t.Errorf("completed trial %d: cell %s", i, c)
			}
		}
	}
	if res.Trials != 18 {
		t.Errorf("%d trial pages, want 18 (2 of 20 never started)", res.Trials)
	}
	if !strings.Contains(idx, "table1") || !strings.Contains(idx, "W/T/L") {
		t.Error("the hoh report tables are missing from the experiment page")
	}
}

func TestRebuildWritesOnlyChangedTrials(t *testing.T) {
	dir := t.TempDir()
	trials := writeSynthRun(t, dir, synthOpts{Tasks: 3, Configs: []string{"cfg"}, Arms: []string{"hoh@1"}})
	opts := testOpts(t) // with figures: none is drawable from these records, and the cache must still hold
	res, err := Build(dir, opts)
	if err != nil || res.Rebuilt != 3 {
		t.Fatalf("first build: %+v %v", res, err)
	}
	cache := filepath.Join(dir, ReportDir, analysisCacheFile)
	before, err := os.Stat(cache)
	must(t, err)
	if res, err = Build(dir, opts); err != nil || res.Rebuilt != 0 {
		t.Fatalf("second build rebuilt %+v %v", res, err)
	}
	// The tables were taken from the cache, not recomputed.
	if after, err := os.Stat(cache); err != nil || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("the tables were recomputed although no score changed (%v)", err)
	}
	// A new stage line in one trial: only its page is rewritten.
	stages := filepath.Join(dir, trials[1].Dir, "stages.jsonl")
	f, err := os.OpenFile(stages, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	f.WriteString(`{"iteration":2,"role":"planner","finished":"2026-01-01T00:00:00Z"}` + "\n")
	f.Close()
	if res, err = Build(dir, opts); err != nil || res.Rebuilt != 1 {
		t.Fatalf("after one change: %+v %v", res, err)
	}
}

func TestServeOnlyReportAndLinkedFiles(t *testing.T) {
	dir := t.TempDir()
	trials := writeSynthRun(t, dir, synthOpts{Tasks: 1, Configs: []string{"cfg"}, Arms: []string{"hoh@1"}})
	// A file next to the run that must never be served, and an unlinked
	// file inside it.
	secret := filepath.Join(filepath.Dir(dir), "outside-secret.txt")
	must(t, os.WriteFile(secret, []byte("do not serve"), 0o644))
	defer os.Remove(secret)
	opts := testOpts(t)
	opts.NoFigures = true
	srv, err := NewServer(dir, opts, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	// Served reports build trial pages when they are first asked for.
	trialPage := filepath.Join(dir, ReportDir, "trials", trials[0].Key+".html")
	if _, err := os.Stat(trialPage); !os.IsNotExist(err) {
		t.Errorf("the trial page was built before it was asked for (%v)", err)
	}
	get := func(p string) (int, string) {
		// A raw request line, so that the client does not clean "../".
		req, _ := http.NewRequest("GET", ts.URL, nil)
		req.URL.Opaque = p
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	tr := trials[0]
	for p, want := range map[string]int{
		"/report/index.html":                                200,
		"/report/trials/" + tr.Key + ".html":                200,
		"/report/assets/app.js":                             200,
		"/" + tr.Dir + "/iter-01/qa/evidence.json":          200, // linked from the trial page
		"/" + tr.Dir + "/trial.json":                        200,
		"/scores.csv":                                       200,
		"/../outside-secret.txt":                            404,
		"/report/../../outside-secret.txt":                  404,
		"/report/%2e%2e/%2e%2e/outside-secret.txt":          404,
		"/report/..%2f..%2foutside-secret.txt":              404,
		"/" + tr.Dir + "/../../../../../outside-secret.txt": 404,
		"/" + tr.Dir + "/workspace/x":                       404, // not linked
		"/" + tr.Dir + "/stages.jsonl/../summary.json":      404,
		"/report/.manifest.json":                            404,
		"/lock.json/..":                                     404,
	} {
		code, body := get(p)
		if code != want {
			t.Errorf("GET %s: %d, want %d", p, code, want)
		}
		if strings.Contains(body, "do not serve") {
			t.Errorf("GET %s served a file outside the run directory", p)
		}
	}
	code, _ := get("/")
	if code != 200 { // redirected to the index
		t.Errorf("GET /: %d", code)
	}
	if _, err := os.Stat(trialPage); err != nil {
		t.Errorf("the trial page asked for was not built: %v", err)
	}
}

func TestListenAddrDefaultsToLoopback(t *testing.T) {
	for in, want := range map[string]string{":8080": "127.0.0.1:8080", "8080": "127.0.0.1:8080", "": "127.0.0.1:8080",
		"0.0.0.0:9000": "0.0.0.0:9000", "127.0.0.1:0": "127.0.0.1:0"} {
		if got := ListenAddr(in); got != want {
			t.Errorf("ListenAddr(%q) = %q, want %q", in, got, want)
		}
	}
}

// While a run is going, served pages are rebuilt from the records that
// changed, and pages of unfinished runs reload themselves.
func TestServeRebuildsWhileTheRunGoes(t *testing.T) {
	dir := t.TempDir()
	trials := writeSynthRun(t, dir, synthOpts{Tasks: 1, Configs: []string{"cfg"}, Arms: []string{"hoh@1"}})
	tdir := filepath.Join(dir, trials[0].Dir)
	// The trial is still running: no summary yet.
	must(t, os.Remove(filepath.Join(tdir, "summary.json")))
	opts := testOpts(t)
	opts.NoFigures = true
	srv, err := NewServer(dir, opts, 0)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	get := func(p string) string {
		resp, err := http.Get(ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	page := "/report/trials/" + trials[0].Key + ".html"
	first := get(page)
	if !strings.Contains(first, `http-equiv="refresh"`) || strings.Contains(first, `id="t2"`) {
		t.Fatalf("page of a running trial: reload %v, iteration 2 shown %v", strings.Contains(first, "refresh"), strings.Contains(first, `id="t2"`))
	}
	// The trial commits a stage of iteration 2.
	f, err := os.OpenFile(filepath.Join(tdir, "stages.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	f.WriteString(`{"iteration":2,"role":"planner","commit":"","finished":"2026-01-01T00:00:00Z"}` + "\n")
	f.Close()
	if again := get(page); !strings.Contains(again, `id="t2"`) {
		t.Error("the served page was not rebuilt after the trial committed a stage")
	}
}

func TestLargeDiffsFoldAndHugeOnesAreNotHighlighted(t *testing.T) {
	diffOf := func(lines int) string {
		var b strings.Builder
		fmt.Fprintf(&b, "diff --git a/big.go b/big.go\nnew file mode 100644\n--- /dev/null\n+++ b/big.go\n@@ -0,0 +1,%d @@\n", lines)
		for i := 0; i < lines; i++ {
			fmt.Fprintf(&b, "+var x%d = %q\n", i, "<b>")
		}
		return b.String()
	}
	small, large, huge := renderDiff(diffOf(10), ""), renderDiff(diffOf(foldLines+1), ""), renderDiff(diffOf(highlightLimit+1), "")
	if small.Folded || !large.Folded || small.Added != 10 || len(small.Files) != 1 || small.Files[0].Status != "added" {
		t.Errorf("small: folded %v added %d; large folded %v", small.Folded, small.Added, large.Folded)
	}
	if !strings.Contains(string(small.Files[0].Hunks[0].Lines[0].HTML), `class="c-`) || huge.HighlightSkipped != true {
		t.Errorf("highlighting: small %q, huge skipped %v", small.Files[0].Hunks[0].Lines[0].HTML, huge.HighlightSkipped)
	}
	for _, dv := range []diffView{small, huge} {
		if h := string(dv.Files[0].Hunks[0].Lines[0].HTML); strings.Contains(h, "<b>") || !strings.Contains(h, "&lt;b&gt;") {
			t.Errorf("diff line not escaped: %s", h)
		}
	}
}

// An execution record naming an image the QA Tester left in its candidate
// shows the frame; a path leaving the trial directory is never linked.
func TestEvidenceFramesStayInsideTheTrial(t *testing.T) {
	dir := t.TempDir()
	trials := writeSynthRun(t, dir, synthOpts{Tasks: 1, Configs: []string{"cfg"}, Arms: []string{"hoh@1"}})
	tdir := filepath.Join(dir, trials[0].Dir)
	qa := filepath.Join(tdir, "iter-01", "qa")
	must(t, os.MkdirAll(filepath.Join(qa, "candidate", "shots"), 0o755))
	must(t, os.WriteFile(filepath.Join(qa, "candidate", "shots", "title.png"), []byte("\x89PNG\r\n\x1a\n"), 0o644))
	outside := filepath.Join(filepath.Dir(dir), "outside.png")
	must(t, os.WriteFile(outside, []byte("x"), 0o644))
	defer os.Remove(outside)
	ev := runrecord.Evidence{Iteration: 1, QAStatus: "pass", Verified: []runrecord.Claim{{ClaimID: "C1", Claim: "title screen", Status: "verified",
		ExecutionRecords: []runrecord.ExecutionRecord{
			{Type: "screenshot", Path: "shots/title.png", Observation: "title shown"},
			{Type: "screenshot", Path: "../../../../../../outside.png", Observation: "escape"},
			{Type: "screenshot", Path: outside, Observation: "absolute"}}}}}
	must(t, writeJSON(filepath.Join(qa, "evidence.json"), ev))
	opts := testOpts(t)
	opts.NoFigures = true
	if _, err := Build(dir, opts); err != nil {
		t.Fatal(err)
	}
	page := read(t, filepath.Join(dir, ReportDir, "trials", trials[0].Key+".html"))
	if !strings.Contains(page, `<img class="frame" src="../../`+trials[0].Dir+`/iter-01/qa/candidate/shots/title.png"`) {
		t.Error("the frame kept in the candidate is not shown")
	}
	if strings.Count(page, `class="frame"`) != 1 || strings.Contains(page, `outside.png"`) {
		t.Error("a path outside the trial directory was linked")
	}
}

// The trial page's timeline draws each stage as its share of the longest
// iteration, so a shorter iteration's row is shorter and durations compare
// across rows (synthetic stages take 500+100t ms: iterations of 1.8, 2.1
// and 2.4 s).
func TestTimelineRowsAreAsLongAsTheirIterations(t *testing.T) {
	dir := t.TempDir()
	trials := writeSynthRun(t, dir, synthOpts{Tasks: 1, Configs: []string{"cfg"}, Arms: []string{"hoh@3"}})
	if _, err := Build(dir, testOpts(t)); err != nil {
		t.Fatal(err)
	}
	page := read(t, filepath.Join(dir, "report", "trials", trials[0].Key+".html"))
	rows := regexp.MustCompile(`(?s)<div class="tl-row">.*?</div></div>`).FindAllString(page, -1)
	if len(rows) != 3 {
		t.Fatalf("%d timeline rows, want 3", len(rows))
	}
	width := regexp.MustCompile(`width: ([0-9.]+)%`)
	for i, want := range []string{"25.0", "29.2", "33.3"} {
		ws := width.FindAllStringSubmatch(rows[i], -1)
		if len(ws) != 3 {
			t.Fatalf("row %d: %d bars: %s", i+1, len(ws), rows[i])
		}
		for _, w := range ws {
			if w[1] != want {
				t.Errorf("iteration %d: bar width %s%%, want %s%% of the longest iteration", i+1, w[1], want)
			}
		}
	}
}
