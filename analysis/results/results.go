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
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
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
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := Decode(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i := range rows {
		if rows[i].Source == "" {
			rows[i].Source = path
		}
	}
	return rows, nil
}

// Decode parses CSV in the record format.
func Decode(r io.Reader) ([]Row, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err == io.EOF {
		return nil, errors.New("empty file: expected a header line")
	}
	if err != nil {
		return nil, err
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if !known(h) {
			return nil, fmt.Errorf("line 1: unknown column %q (known: %s)", h, strings.Join(Columns, ", "))
		}
		if _, dup := col[h]; dup {
			return nil, fmt.Errorf("line 1: column %q appears twice", h)
		}
		col[h] = i
	}
	for _, h := range required {
		if _, ok := col[h]; !ok {
			return nil, fmt.Errorf("line 1: missing required column %q", h)
		}
	}
	var rows []Row
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(header) {
			return nil, fmt.Errorf("line %d: %d fields, header has %d", line, len(rec), len(header))
		}
		get := func(name string) string {
			if i, ok := col[name]; ok {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		row, err := parseRow(get)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func known(h string) bool {
	for _, c := range Columns {
		if c == h {
			return true
		}
	}
	return false
}

func parseRow(get func(string) string) (Row, error) {
	r := Row{
		Benchmark: get("benchmark"), Config: get("config"), Condition: get("condition"),
		Task: get("task"), Family: get("family"), Group: get("group"), Category: get("category"),
		Metric: get("metric"), Source: get("source"), Tokens: math.NaN(), Rep: 1,
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
	var all []Row
	for _, f := range files {
		rows, err := ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("results: %w", err)
		}
		all = append(all, rows...)
	}
	return NewSet(all)
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
// own scores.csv when a whole run folder is given) is kept once.
func NewSet(rows []Row) (*Set, error) {
	type trial struct {
		Benchmark, Config string
		Arm               Arm
		Task              string
		Rep               int
	}
	var kept []Row
	seen := make(map[Key]int, len(rows))
	tokens := map[trial]int{}
	for _, r := range rows {
		if j, dup := seen[r.Key()]; dup {
			if sameRecord(kept[j], r) {
				continue
			}
			return nil, fmt.Errorf("results: %s %s %s %s rep %d metric %s appears twice (%s and %s)",
				r.Benchmark, r.Config, r.Arm(), r.Task, r.Rep, r.Metric, kept[j].Source, r.Source)
		}
		seen[r.Key()] = len(kept)
		kept = append(kept, r)
		if !r.HasTokens() {
			continue
		}
		t := trial{r.Benchmark, r.Config, r.Arm(), r.Task, r.Rep}
		if j, ok := tokens[t]; ok && kept[j].Tokens != r.Tokens {
			return nil, fmt.Errorf("results: %s %s %s %s: tokens differ between metrics %s (%g) and %s (%g)",
				r.Benchmark, r.Config, r.Arm(), r.Task, kept[j].Metric, kept[j].Tokens, r.Metric, r.Tokens)
		}
		tokens[t] = len(kept) - 1
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
