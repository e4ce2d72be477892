// Package viewer turns a run directory into a static HTML report (hoh
// view): an experiment page with the results grid, tables, figures,
// filters and a compare view, and one page per trial with its loop
// iteration by iteration. Every string from a model, a task or a log is
// untrusted: pages are rendered with html/template, highlighted code is
// escaped by chroma, and raw files are only linked. The report is built
// from the run's records only and needs no network.
package viewer

import (
	"crypto/sha256"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hoh-research/hoh/runrecord"
)

// ReportDir is where the report goes inside the run directory.
const ReportDir = runrecord.ReportDir

// Options configure a build.
type Options struct {
	// TableConfigDir holds the table configs of hoh report
	// (NAME.yaml); default: the configs embedded in the binary.
	TableConfigDir string
	// NoFigures leaves the figures out (they are the slowest part).
	NoFigures bool
	// Live makes unfinished runs' pages reload themselves (hoh view
	// --serve).
	Live bool
	// MaxDiffBytes bounds the diff shown per iteration (default 1 MiB).
	MaxDiffBytes int
	// LazyTrials leaves stale trial pages unbuilt; the server builds each
	// when it is asked for.
	LazyTrials bool
	// Workers build trial pages in parallel (default 2 x GOMAXPROCS).
	Workers int
	// Now stamps the pages (default time.Now).
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.MaxDiffBytes == 0 {
		o.MaxDiffBytes = 1 << 20
	}
	if o.Workers <= 0 {
		// Pages wait on file reads as much as they compute.
		o.Workers = 2 * runtime.GOMAXPROCS(0)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Result says what a build wrote.
type Result struct {
	Index      string // path of index.html
	IndexBytes int64
	Trials     int // trial pages in the report
	Rebuilt    int // trial pages written by this build (the rest were current)

	pending map[string]trialJob // with LazyTrials: report-relative page -> its job
}

//go:embed templates/*.html assets/*
var files embed.FS

var pages = template.Must(template.New("").Funcs(funcs).ParseFS(files, "templates/*.html"))

// pagesVersion changes with the templates and assets, so that a new hoh
// rebuilds pages whose records did not change.
var pagesVersion = func() string {
	h := sha256.New()
	fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := files.ReadFile(p)
			h.Write([]byte(p))
			h.Write(b)
		}
		return nil
	})
	return fmt.Sprintf("%x", h.Sum(nil)[:8])
}()

// Build writes dir/report/ for the run, trial or project directory dir,
// rebuilding only the trial pages whose records changed since the last
// build.
func Build(dir string, opts Options) (*Result, error) {
	opts = opts.withDefaults()
	if l := (runrecord.TrialLayout{Dir: dir}); exists(l.Spec()) || l.MultiStep() {
		return buildSingleTrial(dir, opts)
	}
	if isProject(dir) {
		return buildProject(dir, opts)
	}
	return buildExperiment(dir, opts)
}

// manifest remembers each trial page's record fingerprint and the run
// files the report links (the only run files --serve hands out).
type manifest struct {
	Pages map[string]pageEntry `json:"pages"` // report-relative page path
}

type pageEntry struct {
	Fingerprint string   `json:"fingerprint"`
	Links       []string `json:"links"` // run-relative paths of the run files the page links
}

// links is every run file the report links.
func (m manifest) links() map[string]bool {
	out := map[string]bool{}
	for _, p := range m.Pages {
		for _, l := range p.Links {
			out[l] = true
		}
	}
	return out
}

const manifestFile = ".manifest.json"

func readManifest(report string) manifest {
	var m manifest
	runrecord.ReadJSON(filepath.Join(report, manifestFile), &m)
	if m.Pages == nil {
		m.Pages = map[string]pageEntry{}
	}
	return m
}

func writeAssets(report string) error {
	entries, err := files.ReadDir("assets")
	if err != nil {
		return err
	}
	for _, e := range entries {
		data, err := files.ReadFile("assets/" + e.Name())
		if err != nil {
			return err
		}
		if err := writeIfChanged(filepath.Join(report, "assets", e.Name()), data); err != nil {
			return err
		}
	}
	return writeIfChanged(filepath.Join(report, "assets", "chroma.css"), []byte(chromaCSS()))
}

// writeIfChanged keeps unchanged files (and their times) as they are.
func writeIfChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && string(old) == string(data) {
		return nil
	}
	return writeReportFile(path, data)
}

// writeReportFile replaces path atomically (a reader never sees half a
// page) but without the records' fsync: the report is derived data that
// the next build rewrites, and 10,000 fsyncs would dominate a build.
func writeReportFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.tmp-%d-%d", path, os.Getpid(), tmpSeq.Add(1))
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

var tmpSeq atomic.Int64

func renderPage(path, name string, data any) (int64, error) {
	var b strings.Builder
	if err := pages.ExecuteTemplate(&b, name, data); err != nil {
		return 0, fmt.Errorf("render %s: %w", path, err)
	}
	return int64(b.Len()), writeReportFile(path, []byte(b.String()))
}

// trialJob is one trial page to (re)build.
type trialJob struct {
	dir, page, fp string
	ctx           trialContext
	steps         bool // a multi-step trial's page (buildStepsPage)
}

// buildTrialPages renders jobs in parallel and records each page's
// fingerprint and links in m.
func buildTrialPages(jobs []trialJob, m manifest, opts Options) error {
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	ch := make(chan trialJob)
	for w := 0; w < opts.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				ls, err := buildTrialPage(j, opts)
				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				if err == nil {
					m.Pages[j.page] = pageEntry{Fingerprint: j.fp, Links: uniqueSorted(ls)}
				}
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	return first
}

func uniqueSorted(xs []string) []string {
	sort.Strings(xs)
	out := xs[:0]
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}

func saveManifest(report string, m manifest) error {
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return writeReportFile(filepath.Join(report, manifestFile), data)
}

var funcs = template.FuncMap{
	"thousands": thousands,
	"add":       func(a, b int) int { return a + b },
	"pct":       func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + "%" },
	"join":      strings.Join,
	"lines":     func(s string) int { return strings.Count(s, "\n") },
}

// thousands writes 1234567 as 1,234,567.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// buildSingleTrial writes dir/report/index.html for one trial directory.
func buildSingleTrial(dir string, opts Options) (*Result, error) {
	report := filepath.Join(dir, ReportDir)
	if err := writeAssets(report); err != nil {
		return nil, err
	}
	m := readManifest(report)
	res := &Result{Index: filepath.Join(report, "index.html"), Trials: 1}
	j := trialJob{dir: dir, page: "index.html", fp: fingerprint(trialFingerprintFiles(dir)), steps: runrecord.TrialLayout{Dir: dir}.MultiStep(),
		ctx: trialContext{Report: report, Page: res.Index, ToRun: "../", TrialRel: ".", Assets: "assets/", Live: opts.Live}}
	jobs := []trialJob{j}
	if j.steps { // report/steps/NN-<name>.html: each step's own trial
		jobs = append(jobs, stepPages(j, "")...)
	}
	res.Rebuilt = len(jobs)
	if err := buildTrialPages(jobs, m, opts); err != nil {
		return nil, err
	}
	if st, err := os.Stat(res.Index); err == nil {
		res.IndexBytes = st.Size()
	}
	return res, saveManifest(report, m)
}
