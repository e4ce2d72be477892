package tables

import (
	"encoding/csv"
	"fmt"
	"github.com/hoh-research/hoh/analysis/bootstrap"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hoh-research/hoh/analysis/metrics"
	"github.com/hoh-research/hoh/internal/textsafe"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Renderer returns the writer for a format: text | markdown | latex | csv.
func Renderer(format string) (func(io.Writer, []*Table) error, error) {
	switch format {
	case "text", "":
		return func(w io.Writer, ts []*Table) error { return renderGrid(w, ts, false) }, nil
	case "markdown":
		return func(w io.Writer, ts []*Table) error { return renderGrid(w, ts, true) }, nil
	case "latex":
		return renderLaTeX, nil
	case "csv":
		return renderCSV, nil
	}
	return nil, fmt.Errorf("tables: unknown format %q (want text, markdown, latex or csv)", format)
}

func fmtNum(v float64, decimals int) string {
	if v == 0 {
		v = 0 // never "-0"
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

// computed is a cell's recomputed value with the given decimals: its exact
// value rounded once, half to even (metrics.FormatFixed), else its float.
func (c *Cell) computed(decimals int) string {
	if c.Exact != nil {
		return metrics.FormatFixed(c.Exact, decimals)
	}
	return fmtNum(c.Computed, decimals)
}

// ComputedText is the recomputed value in full: the exact decimal when it
// has one (44.06), else the float's shortest decimal; never "-0".
func (c *Cell) ComputedText() string {
	if c.Exact != nil {
		return metrics.FormatShortest(c.Exact)
	}
	if c.Computed == 0 {
		return "0"
	}
	return strconv.FormatFloat(c.Computed, 'g', -1, 64)
}

// Display is a cell as shown in a grid: "71.52" when recomputed and matching
// (or nothing to compare), "52.69 ≠ 52.68*" when it differs, "[60.41]" when
// only printed.
func (c *Cell) Display() string {
	if c == nil {
		return ""
	}
	switch c.Status {
	case Match, ComputedOnly:
		if c.N > 0 {
			return fmt.Sprintf("%s (n=%d)", c.computed(c.Decimals), c.N)
		}
		return c.computed(c.Decimals)
	case Differs:
		return c.computed(c.Decimals+2) + " ≠ " + fmtNum(c.Reported, c.Decimals) + "*"
	case ReportedOnly:
		return "[" + fmtNum(c.Reported, c.Decimals) + "]"
	}
	return "?"
}

const legend = "Cells: recomputed value (matches the printed value within its rounding, or nothing printed); " +
	"\"x ≠ y*\" recomputed x differs from printed y (see notes); \"[y]\" printed only, no per-task data to recompute."

// TokensNote says what a token column counts: the paper's quantity, not
// every token a run spent.
const TokensNote = "Tokens: input + output tokens of the valid attempts (each trial's usage.jsonl), the paper's quantity; " +
	"tokens served to replaced or killed attempts (usage-replaced.jsonl, served.jsonl) were spent too and count against the run's budget, but are in no table."

// CountsTokens reports whether the table has a token column (TokensNote
// belongs under it).
func (t *Table) CountsTokens() bool {
	for _, c := range t.Cells() {
		if c.Metric == "tokens_m" {
			return true
		}
	}
	return false
}

func gridRows(t *Table) [][]string {
	var rows [][]string
	for _, l := range t.Lines {
		row := []string{l.Label}
		for i := range t.Columns {
			var c *Cell
			if i < len(l.Cells) {
				c = l.Cells[i]
			}
			row = append(row, c.Display())
		}
		rows = append(rows, row)
	}
	return rows
}

func renderGrid(w io.Writer, ts []*Table, markdown bool) error {
	for i, t := range ts {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if markdown {
			fmt.Fprintf(w, "### %s: %s\n\n", t.Name, t.Title)
		} else {
			fmt.Fprintf(w, "%s: %s\n", t.Name, t.Title)
		}
		rows := gridRows(t)
		// A terminal is TextWidth columns wide: the text format splits a
		// wider table into parts, each with the row labels (benchstat-style);
		// markdown keeps one table, its reader wraps.
		chunks := [][]int{nil}
		if markdown {
			for j := range t.Columns {
				chunks[0] = append(chunks[0], j)
			}
		} else {
			chunks = columnChunks(t.Columns, rows, TextWidth)
		}
		for ci, cols := range chunks {
			if len(chunks) > 1 {
				if ci > 0 {
					fmt.Fprintln(w)
				}
				fmt.Fprintf(w, "(part %d of %d)\n", ci+1, len(chunks))
			}
			if err := writeChunk(w, t, rows, cols, markdown); err != nil {
				return err
			}
		}
		bullet, prose := "", w
		if markdown {
			bullet = "- "
			fmt.Fprintln(w)
		} else {
			// The prose under a table fits the terminal as the table does
			// (the next table's own lines are not wrapped again).
			prose = &wrapWriter{w: w, width: TextWidth}
		}
		fmt.Fprintln(prose, legend)
		if n := t.tokensNote(); n != "" {
			fmt.Fprintln(prose, n)
		}
		if n := t.importedNote(); n != "" {
			fmt.Fprintln(prose, n)
		}
		if len(t.Fewer) > 0 {
			fmt.Fprintln(prose, "Means over fewer tasks than the header counts:")
			for _, f := range t.Fewer {
				fmt.Fprintln(prose, bullet+f)
			}
		}
		if len(t.Warnings) > 0 {
			fmt.Fprintln(prose, "Left out:")
			for _, x := range t.Warnings {
				fmt.Fprintln(prose, bullet+x)
			}
		}
		notes := t.Notes()
		if len(notes) > 0 {
			fmt.Fprintln(prose, "Notes on cells that differ from the paper:")
			for _, n := range notes {
				fmt.Fprintln(prose, bullet+n)
			}
		}
		for _, r := range t.Remarks {
			fmt.Fprintln(prose, "Note: "+r)
		}
		writeUnequal(prose, t, bullet)
		writeComparisons(prose, t, bullet)
	}
	return nil
}

// writeChunk writes the grid of the label column and value columns cols.
func writeChunk(w io.Writer, t *Table, rows [][]string, cols []int, markdown bool) error {
	head := []string{""}
	for _, j := range cols {
		head = append(head, t.Columns[j])
	}
	body := make([][]string, 0, len(rows))
	for _, full := range rows {
		r := make([]string, 1, len(cols)+1)
		r[0] = full[0]
		for _, j := range cols {
			r = append(r, full[j+1])
		}
		if markdown {
			for j := range r {
				r[j] = strings.ReplaceAll(r[j], "|", "\\|")
			}
		}
		body = append(body, r)
	}
	if !markdown && plainCells(head, body) {
		return writePlainGrid(w, head, body)
	}
	return tableWriterGrid(w, head, body, markdown)
}

// tableWriterGrid draws the grid with tablewriter.
func tableWriterGrid(w io.Writer, head []string, body [][]string, markdown bool) error {
	opts := []tablewriter.Option{tablewriter.WithHeaderAutoFormat(tw.Off)}
	if markdown {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	}
	tb := tablewriter.NewTable(w, opts...)
	tb.Header(toAny(head)...)
	for _, r := range body {
		if err := tb.Append(r); err != nil {
			return err
		}
	}
	return tb.Render()
}

// wrapWriter breaks each line written to it at spaces so that none is
// wider than width columns (a word wider than that stays whole); the
// continuation lines are indented by two spaces.
type wrapWriter struct {
	w     io.Writer
	width int
}

func (ww *wrapWriter) Write(p []byte) (int, error) {
	text := strings.TrimSuffix(string(p), "\n")
	var b strings.Builder
	for li, line := range strings.Split(text, "\n") {
		if li > 0 {
			b.WriteByte('\n')
		}
		col := 0
		for i, word := range strings.Split(line, " ") {
			n := utf8.RuneCountInString(word)
			if i > 0 {
				if col+1+n > ww.width {
					b.WriteString("\n  ")
					col = 2
				} else {
					b.WriteByte(' ')
					col++
				}
			}
			b.WriteString(word)
			col += n
		}
	}
	if strings.HasSuffix(string(p), "\n") {
		b.WriteByte('\n')
	}
	if _, err := io.WriteString(ww.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// TextWidth is the terminal width the text format fits its tables into.
const TextWidth = 120

// columnChunks splits the value columns (indexes into cols) into runs
// whose table, with the label column, fits width; a column wider than that
// alone is a run of its own. rows hold the label first.
func columnChunks(cols []string, rows [][]string, width int) [][]int {
	colWidth := func(j int) int { // cell text plus "│ " and " "
		n := utf8.RuneCountInString(cols[j])
		for _, r := range rows {
			if j+1 < len(r) {
				n = max(n, utf8.RuneCountInString(r[j+1]))
			}
		}
		return n + 3
	}
	label := 0
	for _, r := range rows {
		if len(r) > 0 {
			label = max(label, utf8.RuneCountInString(r[0]))
		}
	}
	base := label + 3 + 1 // the label column and the closing border
	var out [][]int
	var cur []int
	used := base
	for j := range cols {
		cw := colWidth(j)
		if len(cur) > 0 && used+cw > width {
			out = append(out, cur)
			cur, used = nil, base
		}
		cur = append(cur, j)
		used += cw
	}
	if len(cur) > 0 || len(out) == 0 {
		out = append(out, cur)
	}
	return out
}

func writeUnequal(w io.Writer, t *Table, bullet string) {
	if len(t.Unequal) == 0 {
		return
	}
	fmt.Fprintln(w, "WARNING: arms compared over different task sets (--allow-unequal-tasks); means and differences are not over the same tasks:")
	for _, u := range t.Unequal {
		fmt.Fprintln(w, bullet+u)
	}
}

func writeComparisons(w io.Writer, t *Table, bullet string) {
	if len(t.Comparisons) == 0 {
		return
	}
	method := "95% percentile bootstrap CI of the mean difference"
	if t.Interval == bootstrap.TMethod {
		method = "95% t-interval of the mean paired difference"
	}
	fmt.Fprintf(w, "Paired comparisons over tasks (%s; wins/ties/losses):\n", method)
	small := 0
	for _, c := range t.Comparisons {
		fmt.Fprintf(w, "%s%s %s %s %s vs %s: %s [%s, %s], n=%d, W/T/L %d/%d/%d\n", bullet, c.Benchmark,
			configLabel(c.Config), c.Metric, armLabel(c.Arm), armLabel(c.Baseline), c.SignedDiff(), Signed(c.Lo), Signed(c.Hi),
			c.N, c.Wins, c.Ties, c.Losses)
		if c.N < bootstrap.CoverageShownFrom(t.Interval) {
			small = max(small, c.N)
		}
	}
	if small > 0 {
		fmt.Fprintf(w, "Note: %s\n", bootstrap.SmallSampleNote(t.Interval))
	}
}

// Signed prints a difference with its sign to 2 decimals; exactly zero has
// no sign, so "no difference" reads apart from a small gain or loss.
// SignedDiff is Signed of the exact mean difference, rounded once half to
// even (0 exactly: "0.00").
func (c Comparison) SignedDiff() string {
	if c.MeanDiffExact == nil {
		return Signed(c.MeanDiff)
	}
	s := metrics.FormatFixed(c.MeanDiffExact, 2)
	switch {
	case c.MeanDiffExact.Sign() == 0:
		return "0.00"
	case c.MeanDiffExact.Sign() > 0:
		return "+" + s
	case !strings.HasPrefix(s, "-"):
		return "-" + s // a negative difference that rounds to zero keeps its sign, as Signed does
	}
	return s
}

func Signed(v float64) string {
	if v == 0 {
		return "0.00"
	}
	return fmt.Sprintf("%+.2f", v)
}

func toAny(xs []string) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

var latexEscaper = strings.NewReplacer(`\`, `\textbackslash{}`, "&", `\&`, "%", `\%`, "$", `\$`, "#", `\#`,
	"_", `\_`, "{", `\{`, "}", `\}`, "~", `\textasciitilde{}`, "^", `\textasciicircum{}`, "≠", `$\neq$`)

func renderLaTeX(w io.Writer, ts []*Table) error {
	for _, t := range ts {
		fmt.Fprintf(w, "%% %s\n\\begin{table}[t]\n\\centering\n\\caption{%s}\n\\label{tab:%s}\n", t.Name, latexEscaper.Replace(t.Title), t.Name)
		fmt.Fprintf(w, "\\begin{tabular}{l%s}\n\\toprule\n", strings.Repeat("r", len(t.Columns)))
		head := []string{""}
		for _, c := range t.Columns {
			head = append(head, latexEscaper.Replace(c))
		}
		fmt.Fprintf(w, "%s \\\\\n\\midrule\n", strings.Join(head, " & "))
		for i, r := range gridRows(t) {
			if t.Lines[i].Heading {
				fmt.Fprintf(w, "\\multicolumn{%d}{l}{\\textit{%s}} \\\\\n", len(t.Columns)+1, latexEscaper.Replace(r[0]))
				continue
			}
			for j := range r {
				r[j] = latexEscaper.Replace(r[j])
			}
			fmt.Fprintf(w, "%s \\\\\n", strings.Join(r, " & "))
		}
		fmt.Fprintf(w, "\\bottomrule\n\\end{tabular}\n\\end{table}\n")
		if n := t.tokensNote(); n != "" {
			fmt.Fprintf(w, "%% %s\n", n)
		}
		if n := t.importedNote(); n != "" {
			fmt.Fprintf(w, "%% %s\n", n)
		}
		for _, f := range t.Fewer {
			fmt.Fprintf(w, "%% fewer tasks: %s\n", f)
		}
		for _, n := range t.Notes() {
			fmt.Fprintf(w, "%% note: %s\n", strings.ReplaceAll(n, "\n", " "))
		}
		for _, x := range t.Warnings {
			fmt.Fprintf(w, "%% left out: %s\n", x)
		}
		for _, r := range t.Remarks {
			fmt.Fprintf(w, "%% note: %s\n", r)
		}
		for _, u := range t.Unequal {
			fmt.Fprintf(w, "%% WARNING: arms compared over different task sets (--allow-unequal-tasks): %s\n", u)
		}
	}
	return nil
}

// CSVColumns is the header of the CSV rendering: one row per cell.
var CSVColumns = []string{"table", "benchmark", "config", "arm", "scope", "metric", "baseline",
	"recomputed", "reported", "difference", "status", "note"}

func renderCSV(w io.Writer, ts []*Table) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVColumns); err != nil {
		return err
	}
	for _, t := range ts {
		for _, c := range t.Cells() {
			rec, rep, diff := "", "", ""
			if c.HasComputed {
				rec = c.ComputedText()
			}
			if c.HasReported {
				rep = fmtNum(c.Reported, c.Decimals)
			}
			if c.HasComputed && c.HasReported {
				diff = strconv.FormatFloat(c.Difference, 'g', 6, 64)
				if c.Difference == 0 {
					diff = "0"
				}
			}
			if err := cw.Write([]string{t.Name, c.Benchmark, c.Config, c.Arm.String(), c.Scope, c.Metric, c.Baseline.String(),
				rec, rep, diff, string(c.Status), textsafe.Cell(c.Note)}); err != nil { // a note may name tasks
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
