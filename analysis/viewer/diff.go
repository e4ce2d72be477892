package viewer

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// diffView is a parsed, highlighted unified diff.
type diffView struct {
	Files            []diffFile
	Added, Removed   int64
	Raw              string // shown as plain text when the diff does not parse
	Error            string
	Note             string
	Folded           bool // large: every file starts collapsed
	TotalLines       int
	HighlightSkipped bool
}

type diffFile struct {
	Name, OldName  string
	Status         string // added, deleted, renamed, modified
	Binary         bool
	Added, Removed int64
	Hunks          []diffHunk
}

type diffHunk struct {
	Header string
	Lines  []diffLine
}

type diffLine struct {
	Op       string // "add", "del", "ctx"
	Old, New int64  // line numbers, 0 when absent on that side
	HTML     template.HTML
}

// Diffs larger than this start folded, and beyond highlightLimit lines
// only escaping is done (highlighting a huge generated file helps nobody).
const (
	foldLines      = 400
	highlightLimit = 20000
)

var (
	chromaStyle     = styles.Get("github")
	chromaFormatter = chromahtml.New(chromahtml.WithClasses(true), chromahtml.PreventSurroundingPre(true), chromahtml.ClassPrefix("c-"))
)

// chromaCSS is the highlighter's stylesheet.
func chromaCSS() string {
	var b strings.Builder
	chromaFormatter.WriteCSS(&b, chromaStyle)
	return b.String()
}

func renderDiff(raw, note string) diffView {
	dv := diffView{Note: note}
	if strings.TrimSpace(raw) == "" {
		return dv
	}
	files, _, err := gitdiff.Parse(strings.NewReader(raw))
	if err != nil {
		dv.Raw, dv.Error = raw, "the diff could not be parsed ("+err.Error()+"); shown as text"
		return dv
	}
	for _, f := range files {
		for _, fr := range f.TextFragments {
			dv.TotalLines += len(fr.Lines)
		}
	}
	highlight := dv.TotalLines <= highlightLimit
	dv.HighlightSkipped = !highlight
	dv.Folded = dv.TotalLines > foldLines
	for _, f := range files {
		df := diffFile{Name: f.NewName, OldName: f.OldName, Binary: f.IsBinary, Status: "modified"}
		switch {
		case f.IsNew:
			df.Status = "added"
		case f.IsDelete:
			df.Status, df.Name = "deleted", f.OldName
		case f.IsRename:
			df.Status = "renamed"
		}
		var lexer chroma.Lexer
		if highlight {
			lexer = lexers.Match(df.Name)
		}
		for _, fr := range f.TextFragments {
			h := diffHunk{Header: strings.TrimSpace(fmt.Sprintf("-%d,%d +%d,%d @@ %s", fr.OldPosition, fr.OldLines, fr.NewPosition, fr.NewLines, fr.Comment))}
			df.Added += fr.LinesAdded
			df.Removed += fr.LinesDeleted
			htmls := highlightLines(lexer, fr.Lines)
			oldN, newN := fr.OldPosition, fr.NewPosition
			for i, l := range fr.Lines {
				dl := diffLine{HTML: htmls[i]}
				switch l.Op {
				case gitdiff.OpAdd:
					dl.Op, dl.New = "add", newN
					newN++
				case gitdiff.OpDelete:
					dl.Op, dl.Old = "del", oldN
					oldN++
				default:
					dl.Op, dl.Old, dl.New = "ctx", oldN, newN
					oldN++
					newN++
				}
				h.Lines = append(h.Lines, dl)
			}
			df.Hunks = append(df.Hunks, h)
		}
		dv.Added += df.Added
		dv.Removed += df.Removed
		dv.Files = append(dv.Files, df)
	}
	return dv
}

// highlightLines highlights a hunk's lines. Old and new lines are
// tokenised as two separate texts so that a multi-line construct (a
// string, a comment) is coloured as the file has it on each side.
func highlightLines(lexer chroma.Lexer, lines []gitdiff.Line) []template.HTML {
	out := make([]template.HTML, len(lines))
	if lexer == nil {
		for i, l := range lines {
			out[i] = template.HTML(template.HTMLEscapeString(strings.TrimRight(l.Line, "\n")))
		}
		return out
	}
	side := func(keep func(gitdiff.Line) bool, put func(i int) bool) {
		var idx []int
		var text strings.Builder
		for i, l := range lines {
			if keep(l) {
				idx = append(idx, i)
				text.WriteString(strings.TrimRight(l.Line, "\n"))
				text.WriteByte('\n')
			}
		}
		rendered := highlightText(lexer, text.String(), len(idx))
		for k, i := range idx {
			if put(i) {
				out[i] = rendered[k]
			}
		}
	}
	side(gitdiff.Line.New, func(int) bool { return true })
	side(func(l gitdiff.Line) bool { return l.Op == gitdiff.OpDelete }, func(int) bool { return true })
	return out
}

// highlightText renders text as n lines of highlighted HTML; chroma escapes
// every token's text.
func highlightText(lexer chroma.Lexer, text string, n int) []template.HTML {
	out := make([]template.HTML, n)
	it, err := chroma.Coalesce(lexer).Tokenise(nil, text)
	if err != nil {
		for i, l := range strings.SplitN(text, "\n", n) {
			out[i] = template.HTML(template.HTMLEscapeString(l))
		}
		return out
	}
	var buf bytes.Buffer
	for i, line := range chroma.SplitTokensIntoLines(it.Tokens()) {
		if i >= n {
			break
		}
		for j := range line {
			line[j].Value = strings.TrimRight(line[j].Value, "\n")
		}
		buf.Reset()
		if err := chromaFormatter.Format(&buf, chromaStyle, chroma.Literator(line...)); err != nil {
			io.WriteString(&buf, template.HTMLEscapeString(chroma.Stringify(line...)))
		}
		out[i] = template.HTML(buf.String())
	}
	return out
}
