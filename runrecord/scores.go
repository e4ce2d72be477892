package runrecord

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"slices"
	"strconv"
	"strings"
)

// ScoreColumns is the order in which EncodeScores emits the columns of
// scores.csv (the record format; see the package comment).
var ScoreColumns = []string{"benchmark", "config", "condition", "checkpoint", "task",
	"family", "group", "category", "metric", "value", "tokens", "rep", "source"}

// OptionalScoreColumns may appear in a score file; EncodeScores writes
// cost_usd only when some row has a cost, so files without prices keep
// their columns.
var OptionalScoreColumns = []string{"cost_usd"}

// RequiredScoreColumns must appear in the header of every score file.
var RequiredScoreColumns = []string{"benchmark", "config", "condition", "checkpoint", "task", "metric", "value"}

// Row is one per-task result: one line of scores.csv.
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
	Value      float64  // nearest float64 of the decimal written
	Exact      *big.Rat // the decimal written, when Value is not exactly it (see parseDecimal); else nil
	Tokens     float64  // NaN when unknown
	Rep        int
	Source     string
	// CostUSD is the exact dollar cost of Tokens (cost_usd), nil when no
	// price is known: unknown, never 0.
	CostUSD *big.Rat
}

// HasTokens reports whether the row carries a token count.
func (r Row) HasTokens() bool { return !math.IsNaN(r.Tokens) }

// Arm returns the row's arm.
func (r Row) Arm() Arm { return Arm{r.Condition, r.Checkpoint} }

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

// ReadScores reads one CSV file in the record format. Errors name the file
// and line; rows without a source get the file's path.
func ReadScores(path string) ([]Row, error) {
	var rows []Row
	err := ReadScoresEach(path, NewInterner(), func(r Row) { rows = append(rows, r) })
	return rows, err
}

// ReadScoresEach streams the rows of one file to add; rows without a source
// get the file's path.
func ReadScoresEach(path string, in *Interner, add func(Row)) error {
	return ReadScoresChecked(path, in, nil, func(r Row, _ int) { add(r) })
}

// ReadScoresChecked is ReadScoresEach with each row passed to check (nil:
// none) before add, and add given the row's line: a check's error is
// reported with the file and line.
func ReadScoresChecked(path string, in *Interner, check func(Row) error, add func(Row, int)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	source := in.Intern(path)
	err = decodeScores(bufio.NewReaderSize(f, 1<<16), in, check, func(r Row, line int) {
		if r.Source == "" {
			r.Source = source
		}
		add(r, line)
	})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// WriteScores writes rows to path (a scores.csv) atomically.
func WriteScores(path string, rows []Row) error {
	var buf bytes.Buffer
	if err := EncodeScores(&buf, rows); err != nil {
		return err
	}
	return WriteFile(path, buf.Bytes())
}

// DecodeScores parses CSV in the record format.
func DecodeScores(r io.Reader) ([]Row, error) {
	var rows []Row
	err := DecodeScoresEach(r, NewInterner(), func(row Row) { rows = append(rows, row) })
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// Interner keeps one copy of each distinct field text: a few names repeat
// over millions of rows, and a row must not pin its whole CSV line.
type Interner map[string]string

// NewInterner returns an empty Interner; share one across the files of a set.
func NewInterner() *Interner { m := Interner{}; return &m }

// Intern returns the kept copy of s.
func (in *Interner) Intern(s string) string {
	if v, ok := (*in)[s]; ok {
		return v
	}
	s = strings.Clone(s)
	(*in)[s] = s
	return s
}

// DecodeScoresEach parses CSV in the record format, handing each row to add
// as it is read, so a large file is never held twice.
func DecodeScoresEach(r io.Reader, in *Interner, add func(Row)) error {
	return decodeScores(r, in, nil, func(row Row, _ int) { add(row) })
}

func decodeScores(r io.Reader, in *Interner, check func(Row) error, add func(Row, int)) error {
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
		if !knownColumn(h) {
			return fmt.Errorf("line 1: unknown column %s (known: %s)", Quote(h), strings.Join(append(slices.Clone(ScoreColumns), OptionalScoreColumns...), ", "))
		}
		if _, dup := col[h]; dup {
			return fmt.Errorf("line 1: column %s appears twice", Quote(h))
		}
		col[h] = i
	}
	for _, h := range RequiredScoreColumns {
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
		if err == nil && check != nil {
			err = check(row)
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		add(row, line)
	}
	return nil
}

func knownColumn(h string) bool {
	for _, c := range append(ScoreColumns, OptionalScoreColumns...) {
		if c == h {
			return true
		}
	}
	return false
}

func parseRow(get func(string) string, in *Interner) (Row, error) {
	r := Row{
		Benchmark: in.Intern(get("benchmark")), Config: in.Intern(get("config")), Condition: in.Intern(get("condition")),
		Task: in.Intern(get("task")), Family: in.Intern(get("family")), Group: in.Intern(get("group")),
		Category: in.Intern(get("category")), Metric: in.Intern(get("metric")), Source: in.Intern(get("source")),
		Tokens: math.NaN(), Rep: 1,
	}
	for _, name := range RequiredScoreColumns {
		if get(name) == "" {
			return r, fmt.Errorf("empty %s", name)
		}
	}
	for _, name := range nameColumns {
		if c, at := formatChar(get(name)); at >= 0 {
			return r, fmt.Errorf("%s %s contains the invisible format character %U at byte %d: it would print like another name", name, Quote(get(name)), c, at)
		}
	}
	cp, err := strconv.Atoi(get("checkpoint"))
	if err != nil || cp < 1 {
		return r, fmt.Errorf("checkpoint %s is not an integer >= 1", Quote(get("checkpoint")))
	}
	r.Checkpoint = cp
	if r.Value, r.Exact, err = parseDecimal("value", get("value")); err != nil {
		return r, err
	}
	if t := get("tokens"); t != "" {
		if r.Tokens, err = parseFinite("tokens", t); err != nil {
			return r, err
		}
		if r.Tokens < 0 {
			return r, fmt.Errorf("tokens %s is negative", Quote(t))
		}
	}
	if s := get("cost_usd"); s != "" {
		if r.CostUSD, err = ParseUSD(s); err != nil {
			return r, fmt.Errorf("cost_usd: %w", err)
		}
	}
	if s := get("rep"); s != "" {
		if r.Rep, err = strconv.Atoi(s); err != nil || r.Rep < 1 {
			return r, fmt.Errorf("rep %s is not an integer >= 1", Quote(s))
		}
	}
	return r, nil
}

// nameColumns are the fields that name things; none may hold an invisible
// format character.
var nameColumns = []string{"benchmark", "config", "condition", "task", "family", "group", "category", "metric"}

// parseFinite reads a finite decimal as the nearest float64 (tokens: counts,
// which a float holds exactly up to 2^53).
func parseFinite(name, s string) (float64, error) {
	f, _, err := parseDecimal(name, s)
	return f, err
}

// HasScoreHeader tells score files from other CSVs in a folder (figure
// data, reported aggregates) by their header: it must name the required
// columns. A file that cannot be read counts as a score file, so that
// ReadScores reports the problem.
func HasScoreHeader(path string) bool { return ScoreHeaderProblem(path) == "" }

// ScoreHeaderProblem says why path is not a score file (why a folder scan
// skips it): no score header at all, a required column missing, or a
// column that looks like a typo of one. It is "" for a score file and for a
// file that cannot be read (ReadScores reports that).
func ScoreHeaderProblem(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	cr := csv.NewReader(bufio.NewReader(f))
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err == io.EOF {
		return "empty file: no score header"
	}
	if err != nil {
		return ""
	}
	have := map[string]bool{}
	var unknown []string
	for _, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		have[h] = true
		if !knownColumn(h) {
			unknown = append(unknown, h)
		}
	}
	var missing []string
	for _, h := range RequiredScoreColumns {
		if !have[h] {
			missing = append(missing, h)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	if 2*len(missing) > len(RequiredScoreColumns) { // mostly other columns: not meant as scores
		return fmt.Sprintf("no score header (its columns: %s)", strings.Join(header, ", "))
	}
	var problems []string
	for _, h := range unknown {
		if near := Nearest(h, ScoreColumns); near != "" {
			problems = append(problems, fmt.Sprintf("column %q looks like a typo of %q", h, near))
		}
	}
	problems = append(problems, fmt.Sprintf("missing required column(s) %s", strings.Join(missing, ", ")))
	return strings.Join(problems, "; ")
}

// EncodeScores emits rows as CSV with the standard header.
func EncodeScores(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	withCost := slices.ContainsFunc(rows, func(r Row) bool { return r.CostUSD != nil })
	header := ScoreColumns
	if withCost {
		header = append(slices.Clone(ScoreColumns), "cost_usd")
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, r := range rows {
		tokens := ""
		if r.HasTokens() {
			tokens = strconv.FormatFloat(math.Abs(r.Tokens), 'f', -1, 64) // never negative; Abs: never "-0"
		}
		rep := r.Rep
		if rep == 0 {
			rep = 1
		}
		rec := []string{r.Benchmark, r.Config, r.Condition, strconv.Itoa(r.Checkpoint), r.Task,
			r.Family, r.Group, r.Category, r.Metric, r.FormatValue(),
			tokens, strconv.Itoa(rep), r.Source}
		if withCost {
			rec = append(rec, FormatUSD(r.CostUSD))
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
