// Command recorddiff compares two hoh run directories' records, so a
// refactor can be shown to preserve behaviour (issue 38): two runs of the
// same config, one before and one after the change, must record the same
// things once nondeterministic noise (times, ids, paths) is masked.
//
//	go run ./scripts/recorddiff RUN_A RUN_B
//
// Give the two runs output paths of the same length (runs/A, runs/B): the
// prompts name the run directory, and each invocation records its prompt's
// size in bytes, which no mask can restore. Two project directories
// (hoh project run) compare too: their state in .git/hoh and the artifact,
// not git's own files; give them the same name (runs/A/greet, runs/B/greet),
// which names the project.
//
// It prints "records equal" and exits 0, or prints each differing file with
// its first differing line and exits 1; usage and I/O errors exit 2.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process: the exit code, output to stdout, errors
// to stderr.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) != 2 {
		fmt.Fprintln(stderr, "usage: go run ./scripts/recorddiff RUN_A RUN_B")
		return 2
	}
	diffs, err := compareRuns(args[0], args[1])
	if err != nil {
		fmt.Fprintln(stderr, "recorddiff:", err)
		return 2
	}
	if len(diffs) == 0 {
		fmt.Fprintln(stdout, "records equal")
		return 0
	}
	for _, d := range diffs {
		fmt.Fprintln(stdout, d)
	}
	fmt.Fprintf(stdout, "%d files differ\n", len(diffs))
	return 1
}

// skipDirs are directories a run writes that are not records: their
// content is opaque or machine-specific, and what matters of it is recorded
// elsewhere (stages.jsonl names each history commit, for example).
var skipDirs = map[string]string{
	"history.git":   "git objects hash commit times; stages.jsonl records each stage's digest",
	".hoh-private":  "the evaluation key (random per trial) and process bookkeeping",
	"session-state": "the CLI's own session store, with its own timestamps and ids",
	"agent-view":    "a mount point for the agent's view of the trial",
	"report":        "hoh view's HTML, derived from the records",
}

// skipFiles are files a run writes that are not records.
var skipFiles = map[string]string{
	".lock": "the runner's lock file holds its process id",
}

// projectState is where a project keeps hoh's records, inside the
// project's own git directory; the rest of that directory is git's
// (objects and refs hash commit times; stages.jsonl names each commit).
const projectState = ".git/hoh"

// skipProjectFiles are files of a project's state that are not records.
var skipProjectFiles = map[string]string{
	projectState + "/lock":                "the running hoh's process id",
	projectState + "/diffstat-cache.json": "a cache of the history's diff stats, keyed by commit range (a commit hashes its time)",
}

// skippedInProject reports whether rel (slash-separated) is git's part of
// a project's .git directory, or a skipped state file.
func skippedInProject(rel string) bool {
	if _, skip := skipProjectFiles[rel]; skip {
		return true
	}
	if rel == ".git" || rel == projectState || strings.HasPrefix(rel, projectState+"/") {
		return false
	}
	return strings.HasPrefix(rel, ".git/")
}

// listFiles returns the record files under root, relative, slash-separated
// and sorted.
func listFiles(root string) ([]string, error) {
	info, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", root)
	}
	var files []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if _, skip := skipDirs[d.Name()]; (skip || skippedInProject(filepath.ToSlash(rel))) && p != root {
				return filepath.SkipDir
			}
			return nil
		}
		if _, skip := skipFiles[d.Name()]; skip || skippedInProject(filepath.ToSlash(rel)) || !d.Type().IsRegular() {
			return nil
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	sort.Strings(files)
	return files, err
}

// compareRuns returns one report per differing file of two run directories.
func compareRuns(a, b string) ([]string, error) {
	filesA, err := listFiles(a)
	if err != nil {
		return nil, err
	}
	filesB, err := listFiles(b)
	if err != nil {
		return nil, err
	}
	inB := map[string]bool{}
	for _, f := range filesB {
		inB[f] = true
	}
	inA := map[string]bool{}
	var diffs []string
	for _, f := range filesA {
		inA[f] = true
		if !inB[f] {
			diffs = append(diffs, f+": only in "+a)
			continue
		}
		d, err := compareFile(a, b, f)
		if err != nil {
			return nil, err
		}
		if d != "" {
			diffs = append(diffs, d)
		}
	}
	for _, f := range filesB {
		if !inA[f] {
			diffs = append(diffs, f+": only in "+b)
		}
	}
	sort.Strings(diffs)
	return diffs, nil
}

// compareFile compares one file of both runs: binary files by bytes, text
// by masked lines, a root-level JSONL ledger as a sorted set of masked
// lines (its order is the order concurrent trials finished in).
func compareFile(a, b, rel string) (string, error) {
	da, err := os.ReadFile(filepath.Join(a, rel))
	if err != nil {
		return "", err
	}
	db, err := os.ReadFile(filepath.Join(b, rel))
	if err != nil {
		return "", err
	}
	if bytes.Equal(da, db) {
		return "", nil
	}
	if isBinary(da) || isBinary(db) {
		return rel + ": binary files differ", nil
	}
	sorted := !strings.Contains(rel, "/") && strings.HasSuffix(rel, ".jsonl")
	// Both sides at once: masking a provider log of 12 MB takes seconds.
	var la []string
	done := make(chan struct{})
	go func() { la = maskedLines(da, a, rel, sorted); close(done) }()
	lb := maskedLines(db, b, rel, sorted)
	<-done
	n, ok := firstDiff(la, lb)
	if ok {
		return "", nil
	}
	where := "line " + strconv.Itoa(n+1)
	if sorted {
		where = "sorted line " + strconv.Itoa(n+1)
	}
	col := 0
	if n < len(la) && n < len(lb) {
		col = commonPrefix(la[n], lb[n])
	}
	return fmt.Sprintf("%s: %s\n  A: %s\n  B: %s", rel, where, show(la, n, col), show(lb, n, col)), nil
}

// maskedLines is a file's text as compared: JSONL canonical, masked, split
// into lines, sorted if asked.
func maskedLines(data []byte, runDir, rel string, sorted bool) []string {
	text := string(data)
	if strings.HasSuffix(rel, ".jsonl") {
		text = canonicalLines(text)
	}
	lines := strings.Split(mask(text, runDir), "\n")
	if sorted {
		sort.Strings(lines)
	}
	return lines
}

// canonicalLines re-encodes each JSON line with its object keys sorted:
// the provider log holds request bodies as the CLI sent them, and Codex
// writes client_metadata from a hash map, in a different order each run.
// A line that is not JSON is kept as it is.
func canonicalLines(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		var v any
		d := json.NewDecoder(strings.NewReader(l))
		d.UseNumber() // keeps numbers' spelling
		if d.Decode(&v) != nil || d.More() {
			continue
		}
		var buf bytes.Buffer
		e := json.NewEncoder(&buf)
		e.SetEscapeHTML(false)
		if e.Encode(v) == nil {
			lines[i] = strings.TrimSuffix(buf.String(), "\n")
		}
	}
	return strings.Join(lines, "\n")
}

// firstDiff is the index of the first line that differs, ok when none does.
func firstDiff(a, b []string) (int, bool) {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return i, false
		}
	}
	if len(a) == len(b) {
		return 0, true
	}
	return min(len(a), len(b)), false
}

// maxShown bounds a shown line: ledgers hold whole prompts on one line.
const maxShown = 300

// context is how much of a long line is shown before its first difference.
const context = 80

// show is line n quoted for a terminal: non-printable characters escaped,
// at most maxShown bytes from shortly before column col (where the two
// lines part), "(end of file)" past the last line.
func show(lines []string, n, col int) string {
	if n >= len(lines) {
		return "(end of file)"
	}
	line := lines[n]
	var b strings.Builder
	if start := col - context; start > 0 && len(line) > maxShown {
		for start > 0 && !utf8.RuneStart(line[start]) {
			start--
		}
		line = line[start:]
		b.WriteString("...")
	}
	for _, r := range line {
		if b.Len() >= maxShown {
			b.WriteString("...")
			break
		}
		if unicode.IsPrint(r) {
			b.WriteRune(r)
		} else {
			q := strconv.QuoteRune(r) // '\t', '\x00', '\u200b'
			b.WriteString(q[1 : len(q)-1])
		}
	}
	return b.String()
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// isBinary: NUL bytes or invalid UTF-8 (a git object, an image).
func isBinary(data []byte) bool {
	return bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data)
}

// masks are the noise two runs of the same config differ in, found by
// diffing two runs of configs/examples/local-smoke.yaml (those marked not
// seen there guard against what other runs record). Each match is replaced
// by a placeholder before comparing; order matters where one pattern could
// take part of another's match.
var masks = []struct {
	why  string
	re   *regexp.Regexp
	repl string
	// fn, if set, replaces the match instead of repl.
	fn func(string) string
}{
	{why: "RFC3339 timestamps: when a stage finished, when a request was served",
		re: regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`), repl: "<TIME>"},
	{why: "ls -l dates in tool output the CLI logs (Dec  4 19:50)",
		re: regexp.MustCompile(`\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d (\d\d:\d\d| \d{4})\b`), repl: "<LSDATE>"},
	{why: "per-phase wall times (timings_ms), an object whose keys appear only when non-zero",
		re: regexp.MustCompile(`"timings_ms":\s*\{[^}]*\}`), fn: maskTimings},
	{why: "wall times in ms and ns, omitted when zero (first_byte_ms, max_gap_ms), so removed",
		re: regexp.MustCompile(`,?\\?"\w*_(ms|ns)\\?":\s?\d+`), repl: ""},
	{why: "UUIDs: CLI sessions and threads, message ids; before the temp suffixes and unix times, which would take parts of them",
		re: regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`), repl: "<UUID>"},
	{why: "random temp-directory suffixes (os.MkdirTemp), e.g. .state-LABEL-3125370153; before the unix times, which would take some",
		re: regexp.MustCompile(`([-_.][A-Za-z][\w.]*-)\d{6,}`), repl: "$1<RAND>"},
	{why: "unix times in s, ms, µs or ns (2020-2033), e.g. the scripted provider's created_at (not in the local smoke's records)",
		re: regexp.MustCompile(`\b1[6-9]\d{8}(\d{3}){0,3}\b`), repl: "<UNIX>"},
	{why: "git commit hashes of history.git: a commit hashes its time",
		re: regexp.MustCompile(`"(commit|parent|head|base)":\s?"[0-9a-f]{40}"`), repl: `"$1":"<COMMIT>"`},
	{why: "the commit Codex reports of a project's workspace (a commit hashes its time)",
		re: regexp.MustCompile(`(latest_git_commit_hash\\*"?:\s?\\*")[0-9a-f]{40}`), repl: "$1<COMMIT>"},
	{why: "evaluation MACs, keyed by a random per-trial key",
		re: regexp.MustCompile(`"mac":\s?"[0-9a-f]{64}"`), repl: `"mac":"<MAC>"`},
	{why: "loopback ports: each run's scripted provider listens on a free port (in the local smoke only under session-state, skipped)",
		re: regexp.MustCompile(`(127\.0\.0\.1|localhost|\[::1\]):\d+`), repl: "$1:<PORT>"},
	{why: "absolute temp paths outside the run directory (not in the local smoke's records)",
		re: regexp.MustCompile(`/tmp/[^\s"'),:]+`), repl: "<TMP>"},
	{why: "hoh's own version in lock.json, (devel)+checkout+COMMIT: the two commits compared differ by definition",
		re: regexp.MustCompile(`"hoh_version":\s?"[^"]*"`), repl: `"hoh_version":"<VERSION>"`},
	{why: "the scripted provider's response, message and call ids (resp_, msg_, call_, chatcmpl- ...): one counter for all concurrent trials",
		re: regexp.MustCompile(`scripted\d{6,}`), repl: "scripted<SEQ>"},
	{why: "a Docker run's label in docker-runs.txt, hoh-run-PID-UNIXNANO",
		re: regexp.MustCompile(`\bhoh-run-\d+-`), repl: "hoh-run-<PID>-"},
	{why: "OpenCode's session, message and part ids (ses_, msg_, prt_: 12 hex of time, 14 random)",
		re: regexp.MustCompile(`\b(ses|msg|prt)_[0-9a-f]{12}[0-9A-Za-z]{14}\b`), repl: "$1_<ID>"},
	{why: "Claude Code's device id, random per fresh CLI state directory (in its requests' metadata)",
		re: regexp.MustCompile(`(device_id\\*"?:\s?\\*")[0-9a-f]{64}`), repl: "$1<DEVICE>"},
	{why: "Codex's exec output header: a random chunk id",
		re: regexp.MustCompile(`Chunk ID: [0-9a-f]+`), repl: "Chunk ID: <ID>"},
	{why: "Codex's exec output header: the command's wall time",
		re: regexp.MustCompile(`Wall time: [\d.]+ seconds`), repl: "Wall time: <DUR> seconds"},
	{why: "Content-Length of a body that holds masked noise (not in the local smoke: for logs that keep headers)",
		re: regexp.MustCompile(`([Cc]ontent-[Ll]ength"?:\s?"?)\d+`), repl: "$1<LEN>"},
	{why: "MAC addresses a container's network set-up prints (not in the local smoke: for container runs)",
		re: regexp.MustCompile(`\b[0-9a-f]{2}(:[0-9a-f]{2}){5}\b`), repl: "<HWADDR>"},
}

// maskTimings drops a timings_ms object, newlines too: its key count
// varies, so line numbers after it count it as one line.
func maskTimings(string) string { return `"timings_ms":<TIMINGS>` }

// mask replaces the run directory's own path, then every masks pattern.
func mask(text, runDir string) string {
	for _, dir := range runPaths(runDir) {
		text = strings.ReplaceAll(text, dir, "<RUN>")
	}
	for _, m := range masks {
		if m.fn != nil {
			text = m.re.ReplaceAllStringFunc(text, m.fn)
		} else {
			text = m.re.ReplaceAllString(text, m.repl)
		}
	}
	return text
}

// runPaths are the spellings of a run directory a record may hold: as
// given, absolute, and with symlinks resolved; longest first.
func runPaths(dir string) []string {
	paths := []string{filepath.Clean(dir)}
	if abs, err := filepath.Abs(dir); err == nil {
		paths = append(paths, abs)
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			paths = append(paths, real)
		}
		// OpenCode titles a tool call with the path relative to /.
		for _, p := range slices.Clone(paths[1:]) {
			paths = append(paths, strings.TrimPrefix(p, "/"))
		}
	}
	sort.Slice(paths, func(i, j int) bool { return len(paths[i]) > len(paths[j]) })
	var out []string
	for _, p := range paths {
		if p != "." && p != "/" {
			out = append(out, p)
		}
	}
	return out
}
