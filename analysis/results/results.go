// Package results loads per-task results for the analysis: every score
// file (the record format of runrecord: scores.csv of runs and trials, the
// paper's transcribed per-task data) under the given paths, validated into
// one Set in which no key appears twice.
//
// The row, its CSV codec and the condition names are defined in runrecord;
// the aliases below keep the analysis's spelling (results.Row, results.Arm).
package results

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hoh-research/hoh/runrecord"
)

// Set is a validated collection of rows, held compactly (a
// runrecord.ScoreTable: about 64 bytes a row).
type Set struct {
	t      *runrecord.ScoreTable
	series *runrecord.Groups // nil until Series
	arms   *runrecord.Groups // nil until Arms
	// where names the file and line of row i (Load); nil: its source.
	where func(i int) string
	dups  Duplicates
}

// Duplicates are records read twice with the same fields and source, kept
// once, other than a run's scores.csv repeating its trials' own files.
type Duplicates struct {
	Count    int
	Examples []string // the first few, "FILE line A and FILE line B"
}

// Duplicates reports the identical records the set counted once.
func (s *Set) Duplicates() Duplicates { return s.dups }

// Len is the number of rows.
func (s *Set) Len() int { return s.t.Len() }

// Row returns row i.
func (s *Set) Row(i int) runrecord.Row { return s.t.Row(i) }

// Rows returns every row (a copy: prefer All or Row for large sets).
func (s *Set) Rows() []runrecord.Row { return s.t.Rows() }

// All yields every row in order.
func (s *Set) All() iter.Seq[runrecord.Row] {
	return func(yield func(runrecord.Row) bool) {
		for i := range s.t.Len() {
			if !yield(s.t.Row(i)) {
				return
			}
		}
	}
}

// Table returns the rows' compact table (shared: do not modify it).
func (s *Set) Table() *runrecord.ScoreTable { return s.t }

// Where names the place row i was read: file and line when the set was
// loaded from files, else the row's source.
func (s *Set) Where(i int) string {
	if s.where != nil {
		return s.where(i)
	}
	return s.t.Row(i).Source
}

// Options says what Load does with CSV files of a folder that are not
// score files.
type Options struct {
	// Skipped receives one line per skipped file with the reason; nil
	// discards them.
	Skipped io.Writer
	// Strict makes any skipped file an error.
	Strict bool
}

// Load reads files and folders (every *.csv, any case, below a folder, in
// lexical order) and returns one validated Set, listing skipped CSV files on
// stderr. A key present twice is an error naming both places, so two result
// files can never silently overwrite each other.
func Load(paths ...string) (*Set, error) {
	return LoadWith(Options{Skipped: os.Stderr}, paths...)
}

// LoadWith is Load with the handling of skipped files chosen by opts.
func LoadWith(opts Options, paths ...string) (*Set, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("results: %w", err)
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		found, err := scoreFilesUnder(opts, p)
		if err != nil {
			return nil, err
		}
		files = append(files, found...)
	}
	set, err := loadFiles(files)
	if err != nil || set.dups.Count == 0 {
		return set, err
	}
	return noteDuplicates(opts, set)
}

// scoreFilesUnder is the score files below folder p in lexical order,
// reporting (or with Strict refusing) the other CSV files there.
func scoreFilesUnder(opts Options, p string) ([]string, error) {
	var found, skipped []string
	err := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == runrecord.ReportDir && isRunDir(filepath.Dir(path)) {
			return filepath.SkipDir // hoh view's pages and figure data, not records
		}
		if d.IsDir() || !strings.EqualFold(filepath.Ext(path), ".csv") {
			return nil
		}
		if why := runrecord.ScoreHeaderProblem(path); why != "" {
			skipped = append(skipped, fmt.Sprintf("%s: %s", path, why))
			return nil
		}
		found = append(found, path)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	sort.Strings(skipped)
	if opts.Strict && len(skipped) > 0 {
		return nil, fmt.Errorf("results: --strict: %d CSV file(s) under %s are not score files:\n  %s",
			len(skipped), p, strings.Join(skipped, "\n  "))
	}
	if opts.Skipped != nil {
		for _, s := range skipped {
			fmt.Fprintf(opts.Skipped, "results: skipped %s\n", s)
		}
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("results: no result CSV files under %s", p)
	}
	sort.Strings(found)
	return found, nil
}

// loadFiles reads the files into one table and validates it as a Set,
// naming a row's file and line only when an error needs them.
func loadFiles(files []string) (*Set, error) {
	n := countLines(files)
	t := runrecord.NewScoreTable(n) // one allocation, not a doubling copy of millions of rows
	check := newChecker(t)
	start := make([]int, 0, len(files)+1) // the first row of each file
	for _, f := range files {
		start = append(start, t.Len())
		if err := runrecord.ReadScoreTable(f, t, func(i, _ int) error { return check.row(i) }); err != nil {
			return nil, fmt.Errorf("results: %w", err)
		}
	}
	start = append(start, t.Len())
	src := make([]uint32, len(files)) // the name id of each file's path: a row without its own source has it
	for fi, f := range files {
		src[fi], _ = t.NameID(f)
	}
	fileOf := func(i int) int { return sort.SearchInts(start, i+1) - 1 }
	// A row's line is found again only to be named in an error: keeping it
	// would cost 4 bytes a row.
	where := func(i int32) string {
		fi := fileOf(int(i))
		return fmt.Sprintf("%s line %d", files[fi], runrecord.RecordLine(files[fi], int(i)-start[fi]))
	}
	// A run folder holds each record twice by design: in the run's
	// scores.csv and in its trial's own; only other copies are news.
	runOf := make([]string, len(files))
	for fi, f := range files {
		if filepath.Base(f) == runrecord.ScoresFile && isRunDir(filepath.Dir(f)) {
			runOf[fi] = filepath.Dir(f) + string(filepath.Separator)
		}
	}
	expected := func(i, j int32) bool {
		fi, fj := fileOf(int(i)), fileOf(int(j))
		return fi != fj && (runOf[fi] != "" && strings.HasPrefix(files[fj], runOf[fi]) || runOf[fj] != "" && strings.HasPrefix(files[fi], runOf[fj]))
	}
	return newSet(t, where, func(i int32) bool { return t.Source(int(i)) == src[fileOf(int(i))] }, expected)
}

// noteDuplicates says on opts.Skipped that set's duplicate records were
// counted once, or with Strict refuses them.
func noteDuplicates(opts Options, set *Set) (*Set, error) {
	d := set.dups
	more := ""
	if d.Count > len(d.Examples) {
		more = fmt.Sprintf("; and %d more", d.Count-len(d.Examples))
	}
	if opts.Strict {
		return nil, fmt.Errorf("results: --strict: %d record(s) appear twice with the same fields and source: %s%s", d.Count, strings.Join(d.Examples, "; "), more)
	}
	if opts.Skipped != nil {
		fmt.Fprintf(opts.Skipped, "results: note: %d record(s) appear twice with the same fields and source, counted once (--strict refuses): %s%s\n", d.Count, strings.Join(d.Examples, "; "), more)
	}
	return set, nil
}

// isRunDir reports whether dir is a run directory (it has a lock).
func isRunDir(dir string) bool {
	_, err := os.Stat(runrecord.RunLayout{Dir: dir}.Lock())
	return err == nil
}

// countLines is the number of lines of the files, an upper bound of their
// rows; unreadable files count 0 (reading them reports the error).
func countLines(files []string) int {
	n := 0
	buf := make([]byte, 1<<16)
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		for {
			k, err := f.Read(buf)
			n += bytes.Count(buf[:k], []byte{'\n'})
			if err != nil {
				break
			}
		}
		f.Close()
	}
	return n
}

// NewSet validates rows: no key twice, and the tokens of one trial
// checkpoint agree across its metric rows. One record read twice (same key,
// value, tokens and non-empty source, e.g. a run's scores.csv and a trial's
// own scores.csv when a whole run folder is given) is kept once, and
// counted in Duplicates unless it is that run-folder layout (Load says so
// on its Skipped writer, and refuses with Strict).
//
// Rows are grouped by series and by trial arm first (by their names' ids,
// never hashing a string per row), so each check looks only at its group
// (linear in the number of rows); the error reported is the one at the
// earliest row, as a row-by-row scan would find it.
func NewSet(rows []runrecord.Row) (*Set, error) {
	t := runrecord.NewScoreTable(len(rows))
	for _, r := range rows {
		t.Append(r)
	}
	return newSet(t, func(i int32) string { return t.Row(int(i)).Source }, nil, nil)
}

// newSet is NewSet of a table, with where(i) naming the place of row i in
// errors, and unsourced(i) (nil: never) telling a row whose source is only
// the file it was read from, and expected(i, j) (nil: never) telling a copy
// that is no news (a run's scores.csv and its trial's own file).
func newSet(t *runrecord.ScoreTable, where func(int32) string, unsourced func(int32) bool, expected func(i, j int32) bool) (*Set, error) {
	c := setCheck{t: t, where: where, unsourced: unsourced, expected: expected, errAt: t.Len()}
	series := t.GroupRows(t.NumSeries(), func(i int) (uint32, bool) { return t.SeriesID(i), true })
	c.seriesDuplicates(series)
	arms := t.GroupRows(t.NumArms(), func(i int) (uint32, bool) { return t.ArmID(i), true })
	c.trialTokens(arms)
	if c.firstErr != nil {
		return nil, c.firstErr
	}
	drop, dups := c.drop, c.dups
	if drop == nil {
		return &Set{t: t, series: series, arms: arms, where: func(i int) string { return where(int32(i)) }, dups: dups}, nil
	}
	from := make([]int32, 0, t.Len())
	for i := range t.Len() {
		if !drop[i] {
			from = append(from, int32(i))
		}
	}
	kept := t.Keep(func(i int) bool { return !drop[i] })
	return &Set{t: kept, where: func(i int) string { return where(from[i]) }, dups: dups}, nil
}

// setCheck is newSet's state across its checks: the copies to drop, the
// duplicates counted, and the error at the earliest row so far.
type setCheck struct {
	t         *runrecord.ScoreTable
	where     func(int32) string
	unsourced func(int32) bool
	expected  func(i, j int32) bool
	dups      Duplicates
	drop      []bool
	firstErr  error
	errAt     int
}

// taskRep is a trial of a series or arm: its task's name id and its rep.
type taskRep struct {
	task uint32
	rep  int32
}

// fail keeps err if row i is earlier than the one of the error kept, so
// the error reported is the one a row-by-row scan would find first.
func (c *setCheck) fail(i int, err error) {
	if i < c.errAt {
		c.firstErr, c.errAt = err, i
	}
}

// seriesDuplicates finds each (task, rep) twice in a series: per task id,
// the series that last saw it and a bit per repetition 1..64 (a map for
// the rare others).
func (c *setCheck) seriesDuplicates(series *runrecord.Groups) {
	t := c.t
	stamp := make([]int32, t.Names())
	reps := make([]uint64, t.Names())
	var other map[taskRep]bool
	for g := range series.Keys {
		if other != nil {
			clear(other)
		}
		rows := series.Of(g)
		for n, i := range rows {
			task, rep := t.Task(int(i)), t.Rep(int(i))
			if stamp[task] != int32(g+1) {
				stamp[task], reps[task] = int32(g+1), 0
			}
			var dup bool
			if rep >= 1 && rep <= 64 {
				bit := uint64(1) << (rep - 1)
				dup = reps[task]&bit != 0
				reps[task] |= bit
			} else {
				if other == nil {
					other = map[taskRep]bool{}
				}
				k := taskRep{task, rep}
				dup = other[k]
				other[k] = true
			}
			if dup {
				c.duplicate(rows[:n], i, task, rep)
			}
		}
	}
}

// duplicate handles row i, whose (task, rep) one of the earlier rows of its
// series has: a copy of one sourced record is dropped (and counted unless
// expected), anything else is an error.
func (c *setCheck) duplicate(earlier []int32, i int32, task uint32, rep int32) {
	t, where := c.t, c.where
	var j int32
	for _, r := range earlier {
		if t.Task(int(r)) == task && t.Rep(int(r)) == rep {
			j = r
			break
		}
	}
	r, rj := t.Row(int(i)), t.Row(int(j))
	same := t.SameValue(int(i), int(j))
	if same && rj.Source != "" && t.Source(int(i)) == t.Source(int(j)) {
		if c.drop == nil {
			c.drop = make([]bool, t.Len())
		}
		c.drop[i] = true
		if c.expected == nil || !c.expected(i, j) {
			if c.dups.Count++; len(c.dups.Examples) < 5 {
				c.dups.Examples = append(c.dups.Examples, where(j)+" and "+where(i))
			}
		}
		return
	}
	if same {
		// Without a source, one record read twice and two trials that
		// scored alike look the same: refuse, but say what was found.
		why := fmt.Sprintf("the same fields but sources %s and %s", runrecord.Quote(rj.Source), runrecord.Quote(r.Source))
		if c.unsourced != nil && c.unsourced(i) && c.unsourced(j) {
			why = "the same fields and no source column to tell one record read twice from two"
		}
		c.fail(int(i), fmt.Errorf("results: %s %s %s %s rep %d metric %s appears twice with %s (%s and %s); remove the copy, or give the rows a source",
			short(r.Benchmark), short(r.Config), r.Arm(), short(r.Task), r.Rep, short(r.Metric), why, where(j), where(i)))
		return
	}
	c.fail(int(i), fmt.Errorf("results: %s %s %s %s rep %d metric %s appears twice with different records (%s and %s)",
		short(r.Benchmark), short(r.Config), r.Arm(), short(r.Task), r.Rep, short(r.Metric), where(j), where(i)))
}

// trialTokens checks that the tokens of one trial agree across its
// metrics: each row with tokens
// is compared with the previous one of its (task, rep) in its arm, as a
// scan would. A trial's rows are mostly adjacent, so the map is consulted
// only where the (task, rep) changes.
func (c *setCheck) trialTokens(arms *runrecord.Groups) {
	t, where := c.t, c.where
	prev := map[taskRep]int32{}
	// Repetitions 1..64 of up to 2^14 names are kept in a slice, stamped
	// with the arm (never cleared), not hashed: the map holds the others.
	type armRow struct{ arm, row int32 }
	var dense []armRow
	if t.Names() <= 1<<14 {
		dense = make([]armRow, t.Names()*64)
	}
	slot := func(k taskRep) *armRow {
		if dense == nil || k.rep < 1 || k.rep > 64 {
			return nil
		}
		return &dense[int(k.task)*64+int(k.rep-1)]
	}
	for g := range arms.Keys {
		clear(prev)
		run, last := taskRep{}, int32(-1)
		for _, i := range arms.Of(g) {
			if math.IsNaN(t.Tokens(int(i))) || c.drop != nil && c.drop[i] {
				continue
			}
			k := taskRep{t.Task(int(i)), t.Rep(int(i))}
			j := last
			if last < 0 || k != run {
				if last >= 0 {
					if s := slot(run); s != nil {
						*s = armRow{int32(g + 1), last}
					} else {
						prev[run] = last
					}
				}
				if s := slot(k); s != nil {
					if j = -1; s.arm == int32(g+1) {
						j = s.row
					}
				} else {
					var ok bool
					if j, ok = prev[k]; !ok {
						j = -1
					}
				}
				run = k
			}
			if j >= 0 && t.Tokens(int(j)) != t.Tokens(int(i)) {
				r, rj := t.Row(int(i)), t.Row(int(j))
				c.fail(int(i), fmt.Errorf("results: %s %s %s %s: tokens differ between metrics %s (%g, %s) and %s (%g, %s)",
					short(r.Benchmark), short(r.Config), r.Arm(), short(r.Task), short(rj.Metric), rj.Tokens, where(j), short(r.Metric), r.Tokens, where(i)))
			}
			last = i
		}
	}
}

// short bounds a name quoted in an error to ~100 bytes.
func short(s string) string { return runrecord.Short(s) }

// Series and Arms return the set's rows grouped by series and by trial
// arm (shared: do not modify).
func (s *Set) Series() *runrecord.Groups {
	if s.series == nil {
		s.series = s.t.GroupRows(s.t.NumSeries(), func(i int) (uint32, bool) { return s.t.SeriesID(i), true })
	}
	return s.series
}

func (s *Set) Arms() *runrecord.Groups {
	if s.arms == nil {
		s.arms = s.t.GroupRows(s.t.NumArms(), func(i int) (uint32, bool) { return s.t.ArmID(i), true })
	}
	return s.arms
}

// Filter returns the rows for which keep is true.
func (s *Set) Filter(keep func(runrecord.Row) bool) []runrecord.Row {
	var out []runrecord.Row
	for r := range s.All() {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}
