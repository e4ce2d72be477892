// Package results is hoh's one record format for per-task results: one CSV
// row per (benchmark, configuration, condition, checkpoint, task, repetition,
// metric). The paper's transcribed per-task data and hoh's own run records use
// it alike, so every report and figure reads the same thing.
//
// Columns (header required, any order; * marks required columns):
//
//	benchmark*   gamecraft | frontierswe | programbench | builtin | any name
//	config*      harness-model configuration, e.g. codex-gpt-5.5-high
//	condition*   vanilla | vanilla-continuation | hoh | wo-plan-update |
//	             wo-evidence-feedback | wo-warm-start
//	checkpoint*  integer >= 1: loop t of HoH-type conditions, pass k of
//	             vanilla-continuation, 1 for vanilla
//	task*        benchmark task identifier
//	family       benchmark family (GameCraft: slug prefix)
//	group        reporting group (GameCraft: Action, Timing, ...)
//	category     official category (FrontierSWE: Implementation, ...)
//	metric*      overall, mechanics, depth, visuals, art, build, reward, pass_rate, ...
//	value*       the metric on the benchmark's reporting scale
//	tokens       cumulative coding-harness tokens (input + output) of the trial
//	             through this checkpoint; empty when unknown
//	rep          repetition, default 1
//	source       where the row comes from (a paper table, a trial id)
package results

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Condition names used in the record format.
const (
	Vanilla             = "vanilla"
	VanillaContinuation = "vanilla-continuation"
	HoH                 = "hoh"
	WithoutPlanUpdate   = "wo-plan-update"
	WithoutEvidence     = "wo-evidence-feedback"
	WithoutWarmStart    = "wo-warm-start"
)

// Columns is the order in which Write emits columns.
var Columns = []string{"benchmark", "config", "condition", "checkpoint", "task",
	"family", "group", "category", "metric", "value", "tokens", "rep", "source"}

var required = []string{"benchmark", "config", "condition", "checkpoint", "task", "metric", "value"}

// Row is one per-task result.
type Row struct {
	Benchmark  string
	Config     string
	Condition  string
	Checkpoint int
	Task       string
	Family     string
	Group      string
	Category   string
	Metric     string
	Value      float64
	Tokens     float64 // NaN when unknown
	Rep        int
	Source     string
}

// HasTokens reports whether the row carries a token count.
func (r Row) HasTokens() bool { return !math.IsNaN(r.Tokens) }

// Arm identifies one evaluated condition: a condition at a checkpoint.
type Arm struct {
	Condition  string
	Checkpoint int
}

// Arm returns the row's arm.
func (r Row) Arm() Arm { return Arm{r.Condition, r.Checkpoint} }

// String renders an arm as "vanilla", "hoh@3", "vanilla-continuation@2".
func (a Arm) String() string {
	if a.Condition == Vanilla && a.Checkpoint == 1 {
		return Vanilla
	}
	return fmt.Sprintf("%s@%d", a.Condition, a.Checkpoint)
}

// ParseArm reads "hoh@3", "vanilla", "vanilla-continuation@2". A bare
// condition means checkpoint 1.
func ParseArm(s string) (Arm, error) {
	name, cp, found := strings.Cut(strings.TrimSpace(s), "@")
	if name == "" {
		return Arm{}, fmt.Errorf("empty condition in %q", s)
	}
	if !found {
		return Arm{name, 1}, nil
	}
	n, err := strconv.Atoi(cp)
	if err != nil || n < 1 {
		return Arm{}, fmt.Errorf("condition %q: checkpoint %q is not an integer >= 1", s, cp)
	}
	return Arm{name, n}, nil
}

// Key identifies a row; a set of rows holds each key at most once.
type Key struct {
	Benchmark, Config string
	Arm               Arm
	Task              string
	Rep               int
	Metric            string
}

// Key returns the row's identity.
func (r Row) Key() Key {
	return Key{r.Benchmark, r.Config, r.Arm(), r.Task, r.Rep, r.Metric}
}

// Set is a validated collection of rows.
type Set struct {
	Rows []Row
}

// ReadFile reads one CSV file in the record format. Errors name the file and line.
func ReadFile(path string) ([]Row, error) {
	var rows []Row
	err := readFileEach(path, newInterner(), func(r Row) { rows = append(rows, r) })
	return rows, err
}

// readFileEach streams the rows of one file to add; rows without a source
// get the file's path.
func readFileEach(path string, in *interner, add func(Row)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	source := in.intern(path)
	err = decodeEach(bufio.NewReaderSize(f, 1<<16), in, func(r Row) {
		if r.Source == "" {
			r.Source = source
		}
		add(r)
	})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Decode parses CSV in the record format.
func Decode(r io.Reader) ([]Row, error) {
	var rows []Row
	err := decodeEach(r, newInterner(), func(row Row) { rows = append(rows, row) })
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// interner keeps one copy of each distinct field text: a few names repeat
// over millions of rows, and a row must not pin its whole CSV line.
type interner map[string]string

func newInterner() *interner { m := interner{}; return &m }

func (in *interner) intern(s string) string {
	if v, ok := (*in)[s]; ok {
		return v
	}
	s = strings.Clone(s)
	(*in)[s] = s
	return s
}

// decodeEach parses CSV in the record format, handing each row to add as it
// is read, so a large file is never held twice.
func decodeEach(r io.Reader, in *interner, add func(Row)) error {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return errors.New("empty file: expected a header line")
	}
	if err != nil {
		return err
	}
	header = slices.Clone(header)
	col := map[string]int{}
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if !known(h) {
			return fmt.Errorf("line 1: unknown column %q (known: %s)", h, strings.Join(Columns, ", "))
		}
		if _, dup := col[h]; dup {
			return fmt.Errorf("line 1: column %q appears twice", h)
		}
		col[h] = i
	}
	for _, h := range required {
		if _, ok := col[h]; !ok {
			return fmt.Errorf("line 1: missing required column %q", h)
		}
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(header) {
			return fmt.Errorf("line %d: %d fields, header has %d", line, len(rec), len(header))
		}
		get := func(name string) string {
			if i, ok := col[name]; ok {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		row, err := parseRow(get, in)
		if err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		add(row)
	}
	return nil
}

func known(h string) bool {
	for _, c := range Columns {
		if c == h {
			return true
		}
	}
	return false
}

func parseRow(get func(string) string, in *interner) (Row, error) {
	r := Row{
		Benchmark: in.intern(get("benchmark")), Config: in.intern(get("config")), Condition: in.intern(get("condition")),
		Task: in.intern(get("task")), Family: in.intern(get("family")), Group: in.intern(get("group")),
		Category: in.intern(get("category")), Metric: in.intern(get("metric")), Source: in.intern(get("source")),
		Tokens: math.NaN(), Rep: 1,
	}
	for _, name := range required {
		if get(name) == "" {
			return r, fmt.Errorf("empty %s", name)
		}
	}
	cp, err := strconv.Atoi(get("checkpoint"))
	if err != nil || cp < 1 {
		return r, fmt.Errorf("checkpoint %q is not an integer >= 1", get("checkpoint"))
	}
	r.Checkpoint = cp
	if r.Value, err = parseFinite("value", get("value")); err != nil {
		return r, err
	}
	if t := get("tokens"); t != "" {
		if r.Tokens, err = parseFinite("tokens", t); err != nil {
			return r, err
		}
		if r.Tokens < 0 {
			return r, fmt.Errorf("tokens %q is negative", t)
		}
	}
	if s := get("rep"); s != "" {
		if r.Rep, err = strconv.Atoi(s); err != nil || r.Rep < 1 {
			return r, fmt.Errorf("rep %q is not an integer >= 1", s)
		}
	}
	return r, nil
}

func parseFinite(name, s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s %q is not a finite number", name, s)
	}
	return v, nil
}

// Load reads files and folders (every *.csv below a folder, in lexical order)
// and returns one validated Set. A key present twice is an error naming both
// places, so two result files can never silently overwrite each other.
func Load(paths ...string) (*Set, error) {
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
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".csv") && isResultsFile(path) {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("results: %w", err)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("results: no result CSV files under %s", p)
		}
		sort.Strings(found)
		files = append(files, found...)
	}
	all := make([]Row, 0, countLines(files)) // one allocation, not a doubling copy of millions of rows
	in := newInterner()
	for _, f := range files {
		if err := readFileEach(f, in, func(r Row) { all = append(all, r) }); err != nil {
			return nil, fmt.Errorf("results: %w", err)
		}
	}
	return NewSet(all)
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

// isResultsFile tells result CSVs from other CSVs in a folder (figure data,
// reported aggregates) by their header: it must name the required columns.
func isResultsFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return true // let ReadFile report it
	}
	defer f.Close()
	header, err := csv.NewReader(f).Read()
	if err != nil {
		return true
	}
	have := map[string]bool{}
	for _, h := range header {
		have[strings.TrimSpace(h)] = true
	}
	for _, h := range required {
		if !have[h] {
			return false
		}
	}
	return true
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
			fail(int(i), fmt.Errorf("results: %s %s %s %s rep %d metric %s appears twice (%s and %s)",
				r.Benchmark, r.Config, r.Arm(), r.Task, r.Rep, r.Metric, rows[j].Source, r.Source))
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
				fail(int(i), fmt.Errorf("results: %s %s %s %s: tokens differ between metrics %s (%g) and %s (%g)",
					r.Benchmark, r.Config, r.Arm(), r.Task, rows[j].Metric, rows[j].Tokens, r.Metric, r.Tokens))
			}
			prev[k] = i // compared with the previous row with tokens, as a scan would
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	if len(drop) == 0 {
		return &Set{Rows: rows}, nil
	}
	kept := make([]Row, 0, len(rows)-len(drop))
	for i, r := range rows {
		if !drop[int32(i)] {
			kept = append(kept, r)
		}
	}
	return &Set{Rows: kept}, nil
}

func sameRecord(a, b Row) bool {
	sameTokens := a.Tokens == b.Tokens || !a.HasTokens() && !b.HasTokens()
	return a.Source != "" && a.Source == b.Source && a.Value == b.Value && sameTokens &&
		a.Family == b.Family && a.Group == b.Group && a.Category == b.Category
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

// Write emits rows as CSV with the standard header.
func Write(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(Columns); err != nil {
		return err
	}
	for _, r := range rows {
		tokens := ""
		if r.HasTokens() {
			tokens = strconv.FormatFloat(r.Tokens, 'f', -1, 64)
		}
		rep := r.Rep
		if rep == 0 {
			rep = 1
		}
		rec := []string{r.Benchmark, r.Config, r.Condition, strconv.Itoa(r.Checkpoint), r.Task,
			r.Family, r.Group, r.Category, r.Metric, strconv.FormatFloat(r.Value, 'f', -1, 64),
			tokens, strconv.Itoa(rep), r.Source}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
