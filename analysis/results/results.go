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
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hoh-research/hoh/runrecord"
)

// Condition names used in the record format.
const (
	Vanilla             = runrecord.Vanilla
	VanillaContinuation = runrecord.VanillaContinuation
	HoH                 = runrecord.HoH
	WithoutPlanUpdate   = runrecord.WithoutPlanUpdate
	WithoutEvidence     = runrecord.WithoutEvidence
	WithoutWarmStart    = runrecord.WithoutWarmStart
)

type (
	// Row is one per-task result (runrecord.Row).
	Row = runrecord.Row
	// Arm is a condition at a checkpoint (runrecord.Arm).
	Arm = runrecord.Arm
	// Key identifies a row (runrecord.Key).
	Key = runrecord.Key
)

// The record format's codec, defined in runrecord.
var (
	Columns  = runrecord.ScoreColumns
	ParseArm = runrecord.ParseArm
	ReadFile = runrecord.ReadScores
	Decode   = runrecord.DecodeScores
	Write    = runrecord.EncodeScores
)

// Set is a validated collection of rows.
type Set struct {
	Rows []Row
	// where names the file and line of Rows[i] (Load); nil: its source.
	where func(i int) string
}

// Where names the place row i was read: file and line when the set was
// loaded from files, else the row's source.
func (s *Set) Where(i int) string {
	if s.where != nil {
		return s.where(i)
	}
	return s.Rows[i].Source
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
		var found, skipped []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
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
		files = append(files, found...)
	}
	all := make([]Row, 0, countLines(files)) // one allocation, not a doubling copy of millions of rows
	in := runrecord.NewInterner()
	at := make([]location, 0, cap(all))
	for fi, f := range files {
		add := func(r Row, line int) {
			all = append(all, r)
			at = append(at, location{int32(fi), int32(line)})
		}
		if err := runrecord.ReadScoresChecked(f, in, CheckRow, add); err != nil {
			return nil, fmt.Errorf("results: %w", err)
		}
	}
	return newSet(all, func(i int32) string {
		return fmt.Sprintf("%s line %d", files[at[i].file], at[i].line)
	}, func(i int32) bool { return all[i].Source == files[at[i].file] })
}

// isRunDir reports whether dir is a run directory (it has a lock).
func isRunDir(dir string) bool {
	_, err := os.Stat(runrecord.RunLayout{Dir: dir}.Lock())
	return err == nil
}

// location is where a row was read: its file (an index into Load's list)
// and line; two int32 keep it small beside millions of rows.
type location struct{ file, line int32 }

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
// own scores.csv when a whole run folder is given) is kept once. The set
// shares rows' array unless a record was dropped.
//
// Rows are grouped by series and by trial arm first, so each check looks
// only at its group (linear in the number of rows); the error reported is
// the one at the earliest row, as a row-by-row scan would find it.
func NewSet(rows []Row) (*Set, error) {
	return newSet(rows, func(i int32) string { return rows[i].Source }, nil)
}

// newSet is NewSet with where(i) naming the place of row i in errors, and
// unsourced(i) (nil: never) telling a row whose source is only the file it
// was read from.
func newSet(rows []Row, where func(int32) string, unsourced func(int32) bool) (*Set, error) {
	type series struct {
		Benchmark, Config string
		Arm               Arm
		Metric            string
	}
	type arm struct {
		Benchmark, Config string
		Arm               Arm
	}
	type taskRep struct {
		task string
		rep  int
	}
	bySeries := map[series][]int32{}
	byArm := map[arm][]int32{}
	for i, r := range rows {
		k := series{r.Benchmark, r.Config, r.Arm(), r.Metric}
		bySeries[k] = append(bySeries[k], int32(i))
		if r.HasTokens() {
			a := arm{r.Benchmark, r.Config, r.Arm()}
			byArm[a] = append(byArm[a], int32(i))
		}
	}
	drop := map[int32]bool{}
	firstErr, errAt := error(nil), len(rows)
	fail := func(i int, err error) {
		if i < errAt {
			firstErr, errAt = err, i
		}
	}
	for _, idx := range bySeries {
		first := make(map[taskRep]int32, len(idx))
		for _, i := range idx {
			r := &rows[i]
			j, dup := first[taskRep{r.Task, r.Rep}]
			if !dup {
				first[taskRep{r.Task, r.Rep}] = i
				continue
			}
			if sameRecord(rows[j], *r) {
				drop[i] = true
				continue
			}
			if sameFields(rows[j], *r) {
				// Without a source, one record read twice and two trials that
				// scored alike look the same: refuse, but say what was found.
				why := fmt.Sprintf("the same fields but sources %s and %s", runrecord.Quote(rows[j].Source), runrecord.Quote(r.Source))
				if unsourced != nil && unsourced(i) && unsourced(j) {
					why = "the same fields and no source column to tell one record read twice from two"
				}
				fail(int(i), fmt.Errorf("results: %s %s %s %s rep %d metric %s appears twice with %s (%s and %s); remove the copy, or give the rows a source",
					r.Benchmark, r.Config, r.Arm(), r.Task, r.Rep, r.Metric, why, where(j), where(i)))
				continue
			}
			fail(int(i), fmt.Errorf("results: %s %s %s %s rep %d metric %s appears twice with different records (%s and %s)",
				r.Benchmark, r.Config, r.Arm(), r.Task, r.Rep, r.Metric, where(j), where(i)))
		}
	}
	for _, idx := range byArm {
		prev := map[taskRep]int32{}
		for _, i := range idx {
			if drop[i] {
				continue
			}
			r := &rows[i]
			k := taskRep{r.Task, r.Rep}
			if j, ok := prev[k]; ok && rows[j].Tokens != r.Tokens {
				fail(int(i), fmt.Errorf("results: %s %s %s %s: tokens differ between metrics %s (%g, %s) and %s (%g, %s)",
					r.Benchmark, r.Config, r.Arm(), r.Task, rows[j].Metric, rows[j].Tokens, where(j), r.Metric, r.Tokens, where(i)))
			}
			prev[k] = i // compared with the previous row with tokens, as a scan would
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	if len(drop) == 0 {
		return &Set{Rows: rows, where: func(i int) string { return where(int32(i)) }}, nil
	}
	kept := make([]Row, 0, len(rows)-len(drop))
	from := make([]int32, 0, len(rows)-len(drop))
	for i, r := range rows {
		if !drop[int32(i)] {
			kept = append(kept, r)
			from = append(from, int32(i))
		}
	}
	return &Set{Rows: kept, where: func(i int) string { return where(from[i]) }}, nil
}

// sameRecord: the same record read twice under its own source.
func sameRecord(a, b Row) bool {
	return a.Source != "" && a.Source == b.Source && sameFields(a, b)
}

// sameFields: equal in every field but the source.
func sameFields(a, b Row) bool {
	sameTokens := a.Tokens == b.Tokens || !a.HasTokens() && !b.HasTokens()
	sameValue := a.Value == b.Value && (a.Exact == nil) == (b.Exact == nil) && (a.Exact == nil || a.Exact.Cmp(b.Exact) == 0)
	return sameValue && sameTokens && a.Family == b.Family && a.Group == b.Group && a.Category == b.Category
}

// Filter returns the rows for which keep is true.
func (s *Set) Filter(keep func(Row) bool) []Row {
	var out []Row
	for _, r := range s.Rows {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}
