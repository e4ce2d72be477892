package viewer

import (
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hoh-research/hoh/runrecord"
)

// Server serves a run directory's report and the run files the report
// links, nothing else; pages are rebuilt while the run is going.
type Server struct {
	dir     string // what was asked for: a run, trial or project directory
	root    string // what is served: the report's directory's parent
	opts    Options
	every   time.Duration
	mu      sync.Mutex
	checked time.Time
	fp      string
	allowed map[string]bool
	pending map[string]trialJob // trial pages to build when asked for
	Logf    func(format string, args ...any)
}

// NewServer builds the report once and returns its server. Pages are
// rebuilt at most every `every` when the run's records changed.
func NewServer(dir string, opts Options, every time.Duration) (*Server, error) {
	opts.Live, opts.LazyTrials = true, true
	s := &Server{dir: dir, root: siteRoot(dir), opts: opts, every: every, Logf: func(string, ...any) {}}
	if err := s.refresh(true); err != nil {
		return nil, err
	}
	return s, nil
}

// buildPending builds a trial page that a lazy build left for later, and
// records the run files it links. Called with s.mu held.
func (s *Server) buildPending(page string) error {
	j, ok := s.pending[page]
	if !ok {
		return nil
	}
	delete(s.pending, page)
	report := filepath.Join(s.root, ReportDir)
	m := readManifest(report)
	if err := buildTrialPages([]trialJob{j}, m, s.opts.withDefaults()); err != nil {
		return err
	}
	for _, l := range m.Pages[page].Links {
		s.allowed[l] = true
	}
	return saveManifest(report, m)
}

// Index is the path of the report's index page.
func (s *Server) Index() string { return filepath.Join(s.root, ReportDir, "index.html") }

// ListenAddr makes an address without a host bind to loopback only:
// ":8080" and "8080" become "127.0.0.1:8080".
func ListenAddr(addr string) string {
	if addr == "" {
		return "127.0.0.1:8080"
	}
	if !strings.Contains(addr, ":") {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host != "" {
		return addr
	}
	return net.JoinHostPort("127.0.0.1", port)
}

// recordFiles are the files whose change means the report is stale.
func (s *Server) recordFiles() []string {
	if s.root != s.dir { // a project: its state directory's records
		l := runrecord.ProjectLayout{Project: s.dir}
		return append(trialFingerprintFiles(l.Trial()), l.Dynamics(), l.IssuesJSONL())
	}
	files := runFingerprintFiles(s.dir)
	single := false
	if l := (runrecord.TrialLayout{Dir: s.dir}); exists(l.Spec()) || l.MultiStep() {
		single = true
		files = trialFingerprintFiles(s.dir)
	}
	if !single {
		if rr, err := readPlanDirs(s.dir); err == nil {
			for _, d := range rr {
				files = append(files, trialFingerprintFiles(filepath.Join(s.dir, d))...)
			}
		}
	}
	return files
}

func (s *Server) refresh(force bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !force && time.Since(s.checked) < s.every {
		return nil
	}
	s.checked = time.Now()
	fp := fingerprint(s.recordFiles())
	if !force && fp == s.fp {
		return nil
	}
	res, err := Build(s.dir, s.opts)
	if err != nil {
		return err
	}
	s.fp = fp
	s.pending = res.pending
	s.allowed = readManifest(filepath.Join(s.root, ReportDir)).links()
	s.Logf("report rebuilt: %d trial page(s) rewritten", res.Rebuilt)
	return nil
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	raw := r.URL.Path
	for _, seg := range strings.Split(raw, "/") {
		if seg == ".." || strings.HasPrefix(seg, ".") && seg != "" {
			http.NotFound(w, r)
			return
		}
	}
	p := strings.TrimPrefix(path.Clean("/"+raw), "/")
	if p == "" || p == "." {
		http.Redirect(w, r, "/"+ReportDir+"/index.html", http.StatusFound)
		return
	}
	if strings.HasSuffix(p, ".html") || p == ReportDir {
		if err := s.refresh(false); err != nil {
			s.Logf("rebuild: %v", err)
		}
	}
	if p == ReportDir {
		p = ReportDir + "/index.html"
	}
	s.mu.Lock()
	page := strings.TrimPrefix(p, ReportDir+"/")
	if !strings.HasPrefix(p, ReportDir+"/") && !s.allowed[p] {
		// A run file of a trial whose page is not built yet: build it, so
		// that what the page links is known (the innermost trial's: a
		// step's own page links more of its files than its trial's page).
		best := ""
		for name, j := range s.pending {
			if strings.HasPrefix(p, j.ctx.TrialRel+"/") && len(j.ctx.TrialRel) > len(best) {
				page, best = name, j.ctx.TrialRel
			}
		}
	}
	if err := s.buildPending(page); err != nil {
		s.Logf("build %s: %v", p, err)
	}
	allowed := s.allowed[p]
	s.mu.Unlock()
	inReport := strings.HasPrefix(p, ReportDir+"/")
	if !inReport && !allowed {
		http.NotFound(w, r)
		return
	}
	full := filepath.Join(s.root, filepath.FromSlash(p))
	if !within(s.root, full) {
		http.NotFound(w, r)
		return
	}
	st, err := os.Stat(full)
	if err != nil || !st.Mode().IsRegular() {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	if inReport {
		h.Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:")
	} else {
		// Run files are untrusted (logs, prompts, an agent's media): shown
		// as text or images, never run as a page of this origin.
		h.Set("Content-Security-Policy", "sandbox; default-src 'none'; img-src 'self'; style-src 'unsafe-inline'")
		if !imageExt[strings.ToLower(path.Ext(p))] {
			h.Set("Content-Type", "text/plain; charset=utf-8")
		}
	}
	h.Set("Cache-Control", "no-cache")
	f, err := os.Open(full)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	http.ServeContent(w, r, st.Name(), st.ModTime(), f)
}

// within reports whether p, with symbolic links resolved, lies inside dir.
func within(dir, p string) bool {
	d, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return false
	}
	q, err := filepath.EvalSymlinks(p)
	if err != nil {
		return false
	}
	r, err := filepath.Rel(d, q)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator))
}
