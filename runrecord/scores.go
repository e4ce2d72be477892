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
	t := NewScoreTable(0)
	if err := ReadScoreTable(path, t, nil); err != nil {
		return nil, err
	}
	return t.Rows(), nil
}

// ReadScoreTable appends the rows of one CSV file in the record format to
// t, calling each (nil: none) with every row's index and line as it is
// added: an error from each stops the read and is reported with the file
// and line. Rows without a source get the file's path.
func ReadScoreTable(path string, t *ScoreTable, each func(i, line int) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := decodeTable(f, t, path, each); err != nil {
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
	t := NewScoreTable(0)
	if err := decodeTable(r, t, "", nil); err != nil {
		return nil, err
	}
	return t.Rows(), nil
}

// Name columns of a record, in ScoreColumns order.
const (
	nBenchmark = iota
	nConfig
	nCondition
	nTask
	nFamily
	nGroup
	nCategory
	nMetric
	nSource
	nNames
)

// scoreCols are the column positions of a score file's header (-1: absent).
type scoreCols struct {
	name                                    [nNames]int
	checkpoint, value, tokens, rep, costUSD int
	n                                       int
	required                                []int // of RequiredScoreColumns, in its order
}

// readScoreHeader reads the header: known columns, none twice, the
// required ones present.
func readScoreHeader(header [][]byte) (scoreCols, error) {
	c := scoreCols{n: len(header)}
	col := map[string]int{}
	for i, hb := range header {
		h := strings.TrimSpace(strings.TrimPrefix(string(hb), "\ufeff"))
		if !knownColumn(h) {
			return c, fmt.Errorf("line 1: unknown column %s (known: %s)", Quote(h), strings.Join(append(slices.Clone(ScoreColumns), OptionalScoreColumns...), ", "))
		}
		if _, dup := col[h]; dup {
			return c, fmt.Errorf("line 1: column %s appears twice", Quote(h))
		}
		col[h] = i
	}
	for _, h := range RequiredScoreColumns {
		i, ok := col[h]
		if !ok {
			return c, fmt.Errorf("line 1: missing required column %q", h)
		}
		c.required = append(c.required, i)
	}
	at := func(name string) int {
		if i, ok := col[name]; ok {
			return i
		}
		return -1
	}
	for k, name := range [nNames]string{"benchmark", "config", "condition", "task", "family", "group", "category", "metric", "source"} {
		c.name[k] = at(name)
	}
	c.checkpoint, c.value, c.tokens, c.rep, c.costUSD = at("checkpoint"), at("value"), at("tokens"), at("rep"), at("cost_usd")
	return c, nil
}

// decodeTable parses CSV in the record format into t, in one pass with no
// allocation per row: a field is compared with the same column's previous
// one before its name is looked up, names are checked once, and short
// decimals are read without a string. Rows without a source get source.
func decodeTable(r io.Reader, t *ScoreTable, source string, each func(i, line int) error) error {
	s := newFieldScanner(r)
	header, _, err := s.next()
	if err == io.EOF {
		return errors.New("empty file: expected a header line")
	}
	if err != nil {
		return err
	}
	cols, err := readScoreHeader(header)
	if err != nil {
		return err
	}
	d := rowDecoder{t: t, cols: cols, source: t.intern(source)}
	for {
		fields, line, err := s.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if len(fields) != cols.n {
			return fmt.Errorf("line %d: %d fields, header has %d", line, len(fields), cols.n)
		}
		if err := d.decode(fields); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		if each != nil {
			if err := each(t.Len()-1, line); err != nil {
				return fmt.Errorf("line %d: %w", line, err)
			}
		}
	}
}

func knownColumn(h string) bool {
	for _, c := range append(ScoreColumns, OptionalScoreColumns...) {
		if c == h {
			return true
		}
	}
	return false
}

// rowDecoder turns a record's fields into a packed row of its table.
type rowDecoder struct {
	t      *ScoreTable
	cols   scoreCols
	source uint32
	last   [nNames]struct {
		raw []byte
		id  uint32
		ok  bool
	}
	lastArm     ArmKey
	lastArmID   uint32
	hasLastArm  bool
	seriesOf    []struct{ arm, series uint32 } // by metric id: the last arm's series (arm+1; 0: none)
	lastLabel   labelKey
	lastLabelID uint32
	hasLabel    bool
	lastCost    []byte
	lastCostID  uint32
	hasLastCost bool
}

// field returns column i's field without surrounding space ("" when absent).
func field(fields [][]byte, i int) []byte {
	if i < 0 {
		return nil
	}
	f := fields[i]
	if n := len(f); n > 0 && f[0] > ' ' && f[0] < 0x80 && f[n-1] > ' ' && f[n-1] < 0x80 {
		return f
	}
	// ASCII space only: a non-breaking or other Unicode space is part of
	// the field (and refused at a name's edge), never silently trimmed
	// into another name.
	return bytes.Trim(f, " \t\r\n\v\f")
}

// decode appends the row of one record's fields to the table. It runs once
// per row of the load's hot loop, so each step below handles a group of
// fields and caches the last value seen, never work per byte.
func (d *rowDecoder) decode(fields [][]byte) error {
	c := &d.cols
	for k, i := range c.required {
		// A first byte above space is not trimmed: the field is not empty.
		if f := fields[i]; (len(f) == 0 || f[0] <= ' ') && len(field(fields, i)) == 0 {
			return fmt.Errorf("empty %s", RequiredScoreColumns[k])
		}
	}
	p := packedRow{rep: 1, tokens: math.NaN()}
	var name [nNames]uint32
	if err := d.names(fields, &name); err != nil {
		return err
	}
	p.task, p.source = name[nTask], name[nSource]
	if p.source == 0 {
		p.source = d.source
	}
	if err := d.place(&p, fields, &name); err != nil {
		return err
	}
	exact, err := d.measures(&p, fields)
	if err != nil {
		return err
	}
	if exact != nil {
		p.cost |= exactBit
		d.t.exact[int32(len(d.t.rows))] = exact
	}
	d.t.rows = append(d.t.rows, p)
	return nil
}

// names interns the row's name columns into name, reusing each column's
// last id while its field repeats (records come sorted, so most do).
func (d *rowDecoder) names(fields [][]byte, name *[nNames]uint32) error {
	for k := range nNames {
		f := field(fields, d.cols.name[k])
		last := &d.last[k]
		if last.ok && bytes.Equal(f, last.raw) {
			name[k] = last.id
			continue
		}
		id := d.t.internBytes(f)
		if k != nSource && !d.t.checked[id] {
			if err := checkName(k, d.t.names[id]); err != nil {
				return err
			}
			d.t.checked[id] = true
		}
		last.raw, last.id, last.ok = append(last.raw[:0], f...), id, true
		name[k] = id
	}
	return nil
}

// checkName refuses a new name of column k that would print like another
// name or not at all; it runs once per distinct name, off the hot path.
func checkName(k int, s string) error {
	if ch, at := formatChar(s); at >= 0 {
		return fmt.Errorf("%s %s contains the invisible format character %U at byte %d: it would print like another name", nameColumns[k], Quote(s), ch, at)
	}
	if what, ch, at := nameProblem(s); at >= 0 {
		return fmt.Errorf("%s %s contains %s %U at byte %d: it would print like another name or not at all", nameColumns[k], Quote(s), what, ch, at)
	}
	return nil
}

// place sets the row's series (of its arm and metric) and labels, reusing
// the last arm's, series' and labels' ids while they repeat.
func (d *rowDecoder) place(p *packedRow, fields [][]byte, name *[nNames]uint32) error {
	c := &d.cols
	cp, ok := parseCount(field(fields, c.checkpoint))
	if !ok {
		cp64, err := strconv.Atoi(string(field(fields, c.checkpoint)))
		if err != nil || cp64 < 1 {
			return fmt.Errorf("checkpoint %s is not an integer >= 1", Quote(string(field(fields, c.checkpoint))))
		}
		cp = cp64
	}
	arm := ArmKey{name[nBenchmark], name[nConfig], name[nCondition], int32(cp)}
	if !d.hasLastArm || arm != d.lastArm {
		d.lastArm, d.lastArmID, d.hasLastArm = arm, d.t.armID(arm), true
	}
	m := name[nMetric]
	for int(m) >= len(d.seriesOf) {
		d.seriesOf = append(d.seriesOf, struct{ arm, series uint32 }{})
	}
	if so := &d.seriesOf[m]; so.arm == d.lastArmID+1 {
		p.series = so.series
	} else {
		p.series = d.t.seriesOf(d.lastArmID, m)
		so.arm, so.series = d.lastArmID+1, p.series
	}
	l := labelKey{name[nFamily], name[nGroup], name[nCategory]}
	if !d.hasLabel || l != d.lastLabel {
		d.lastLabel, d.lastLabelID, d.hasLabel = l, d.t.labelID(l), true
	}
	p.labels = d.lastLabelID
	return nil
}

// measures reads the row's value, tokens, cost and rep, in that order so
// a row with several bad fields reports the same first one; exact is the
// value's exact form when the float alone would not hold it.
func (d *rowDecoder) measures(p *packedRow, fields [][]byte) (exact *big.Rat, err error) {
	c := &d.cols
	if v, ok := parseShortDecimal(field(fields, c.value)); ok {
		p.value = v
	} else if p.value, exact, err = parseDecimal("value", string(field(fields, c.value))); err != nil {
		return nil, err
	}
	if f := field(fields, c.tokens); len(f) > 0 {
		v, ok := parseShortDecimal(f)
		if !ok {
			if v, err = parseFinite("tokens", string(f)); err != nil {
				return nil, err
			}
		}
		if v < 0 {
			return nil, fmt.Errorf("tokens %s is negative", Quote(string(f)))
		}
		p.tokens = v
	}
	if f := field(fields, c.costUSD); len(f) > 0 {
		if p.cost, err = d.costID(f); err != nil {
			return nil, err
		}
	}
	if f := field(fields, c.rep); len(f) > 0 {
		rep, ok := parseCount(f)
		if !ok {
			r, err := strconv.Atoi(string(f))
			if err != nil || r < 1 {
				return nil, fmt.Errorf("rep %s is not an integer >= 1", Quote(string(f)))
			}
			rep = r
		}
		p.rep = int32(rep)
	}
	return exact, nil
}

// costID is the id of a cost_usd field, the last one's while it repeats,
// parsing only a cost the table has not seen.
func (d *rowDecoder) costID(f []byte) (uint32, error) {
	if d.hasLastCost && bytes.Equal(f, d.lastCost) {
		return d.lastCostID, nil
	}
	id, ok := d.t.costIDs[string(f)]
	if !ok {
		v, err := ParseUSD(string(f))
		if err != nil {
			return 0, fmt.Errorf("cost_usd: %w", err)
		}
		id = d.t.costID(string(f), v)
	}
	d.lastCost, d.lastCostID, d.hasLastCost = append(d.lastCost[:0], f...), id, true
	return id, nil
}

// parseCount reads a plain count >= 1 of up to 9 digits; ok false sends
// anything else to strconv for its verdict.
func parseCount(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n >= 1
}

var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
	1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseShortDecimal reads a decimal of at most 15 digits from the first
// nonzero one, no exponent and at most 22 decimals, exactly as
// parseDecimal does (the float nearest the decimal, unsigned zero, no
// exact form needed): its integer of digits and the power of ten are both
// exact float64s, so one division rounds correctly. ok false leaves
// anything else to parseDecimal.
func parseShortDecimal(b []byte) (float64, bool) {
	i, neg := 0, false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg, i = b[0] == '-', 1
	}
	var m uint64
	digits, frac, sawDigit := 0, -1, false
	for ; i < len(b); i++ {
		c := b[i]
		if c == '.' {
			if frac >= 0 {
				return 0, false
			}
			frac = 0
			continue
		}
		if c < '0' || c > '9' {
			return 0, false
		}
		sawDigit = true
		m = m*10 + uint64(c-'0')
		if m != 0 {
			if digits++; digits > 15 {
				return 0, false
			}
		}
		if frac >= 0 {
			frac++
		}
	}
	if !sawDigit || frac > 22 {
		return 0, false
	}
	if m == 0 {
		return 0, true
	}
	f := float64(m)
	if frac > 0 {
		f /= pow10[frac]
	}
	if neg {
		f = -f
	}
	return f, true
}

// nameColumns are the fields that name things; none may hold an invisible
// format character.
var nameColumns = [nNames]string{"benchmark", "config", "condition", "task", "family", "group", "category", "metric", "source"}

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

// ImportedSourceMark follows a record's source path when the record was
// imported from another harness's results (hoh import harbor): the rest
// names the trial's exception type in that harness, "none" when it had
// none. Reports use it to say where such rows' tokens come from.
const ImportedSourceMark = "#harbor-exception="
