package viewer

// The tables and figures of hoh report and hoh plot, through their public
// entry points: the viewer only lays out what they compute.

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hoh-research/hoh/analysis/figures"
	"github.com/hoh-research/hoh/analysis/results"
	"github.com/hoh-research/hoh/analysis/tables"
)

type tableView struct {
	Name, Title string
	Columns     []string
	Lines       []lineView
	Comparisons []comparisonView
	Notes       []string
}

type lineView struct {
	Label   string
	Heading bool
	Cells   []string
}

type comparisonView struct {
	Benchmark, Config, Metric, Arm, Baseline string
	N, Wins, Ties, Losses                    int
	Diff, Lo, Hi                             string
}

type figureView struct {
	Name, About, Href, CSV string
}

func signed(v float64) string { return fmt.Sprintf("%+.2f", v) }

func fillTables(p *indexPage, rr *runRecords, opts Options) {
	if len(rr.Scores) == 0 {
		p.TableErrors = append(p.TableErrors, "no scores yet: tables appear once trials have been evaluated")
		return
	}
	set, err := results.NewSet(rr.Scores)
	if err != nil {
		p.TableErrors = append(p.TableErrors, "scores: "+err.Error())
		return
	}
	for _, name := range tables.Names {
		cfg, err := tables.PaperConfig(name)
		if opts.TableConfigDir != "" {
			cfg, err = tables.LoadConfig(filepath.Join(opts.TableConfigDir, name+".yaml"))
		}
		if err != nil {
			p.TableErrors = append(p.TableErrors, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		ts, err := tables.Build(name, cfg, set, nil)
		if err != nil {
			p.TableErrors = append(p.TableErrors, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		for _, t := range ts {
			p.Tables = append(p.Tables, viewTable(t))
		}
	}
}

func viewTable(t *tables.Table) tableView {
	tv := tableView{Name: t.Name, Title: t.Title, Columns: t.Columns, Notes: t.Notes()}
	for _, l := range t.Lines {
		lv := lineView{Label: l.Label, Heading: l.Heading}
		if !l.Heading {
			for i := range t.Columns {
				var c *tables.Cell
				if i < len(l.Cells) {
					c = l.Cells[i]
				}
				lv.Cells = append(lv.Cells, c.Display())
			}
		}
		tv.Lines = append(tv.Lines, lv)
	}
	for _, c := range t.Comparisons {
		tv.Comparisons = append(tv.Comparisons, comparisonView{Benchmark: c.Benchmark, Config: c.Config, Metric: c.Metric,
			Arm: c.Arm, Baseline: c.Baseline, N: c.N, Wins: c.Wins, Ties: c.Ties, Losses: c.Losses,
			Diff: signed(c.MeanDiff), Lo: signed(c.Lo), Hi: signed(c.Hi)})
	}
	return tv
}

// fillFigures draws every figure the run's records support as SVG into
// report/figures (with the CSV of its marks).
func fillFigures(p *indexPage, dir, report string) {
	out := filepath.Join(report, "figures")
	os.RemoveAll(out)
	outs, skips, err := figures.Plot("all", []string{dir}, figures.Options{OutDir: out, Formats: []string{"svg"}})
	if err != nil {
		p.FigureNotes = append(p.FigureNotes, "figures: "+err.Error())
	}
	csvs := map[string]string{}
	for _, o := range outs {
		if o.Format == "csv" {
			csvs[o.Figure] = rel(report, o.Path)
		}
	}
	for _, o := range outs {
		if o.Format == "svg" {
			p.Figures = append(p.Figures, figureView{Name: o.Figure, About: figures.About(o.Figure), Href: rel(report, o.Path), CSV: csvs[o.Figure]})
		}
	}
	sort.Slice(p.Figures, func(i, j int) bool { return p.Figures[i].Name < p.Figures[j].Name })
	for _, s := range skips {
		p.FigureNotes = append(p.FigureNotes, s.Figure+" not drawn: "+s.Reason)
	}
}

func rel(base, p string) string {
	r, err := filepath.Rel(base, p)
	if err != nil {
		return p
	}
	return strings.ReplaceAll(filepath.ToSlash(r), "#", "%23")
}
