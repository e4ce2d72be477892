package viewer

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hoh-research/hoh/internal/testenv/browserenv"
)

// In a real browser: hostile text from a plan, a diff and a log is shown as
// text and runs nothing; the grid's filters and the compare view work.
func TestBrowserShowsUntrustedTextAsTextAndFilters(t *testing.T) {
	dir := t.TempDir()
	trials := writeSynthRun(t, dir, synthOpts{Tasks: 10, Configs: []string{"cfg"}, Arms: []string{"vanilla", "hoh@2"},
		History: true, Hostile: hostile, Shapes: true})
	opts := testOpts(t)
	opts.NoFigures = true
	res, err := Build(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := browserenv.New(t, 2*time.Minute)
	page := "file://" + filepath.Join(dir, ReportDir, "trials", trials[10].Key+".html")
	if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#t2"))); err != nil {
		t.Fatal(err)
	}
	pwned, err := chromedp.Run(ctx, chromedp.Evaluate[string](`String(window.hohPwned)`))
	if err != nil || pwned != "undefined" {
		t.Fatalf("a script from the records ran: window.hohPwned = %q (%v)", pwned, err)
	}
	alerts, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("main img[src=x]").length`))
	if alerts != 0 {
		t.Error("an <img> from the records became an element")
	}
	for sel, want := range map[string]string{
		"#t1 .dt-objective":           `<script>window.hohPwned="PLAN"</script>`,
		"#t1 .diff table.code":        `<script>window.hohPwned="DIFF"</script>`,
		"#t1 .invocations pre.stderr": `<script>window.hohPwned="LOG"</script>`,
	} {
		text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll(`+strconv.Quote(sel)+`)).map(e => e.textContent).join("\n")`))
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		if !strings.Contains(text, want) {
			t.Errorf("%s shows %q, want the text %q", sel, text, want)
		}
	}

	// The grid: filter by status and condition; compare two arms.
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+res.Index), chromedp.WaitVisible(chromedp.CSS("#results-grid"))); err != nil {
		t.Fatal(err)
	}
	visibleRows := `Array.from(document.querySelectorAll("#results-grid tbody tr")).filter(r => !r.hidden).length`
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](visibleRows))
	if err != nil || n != 10 {
		t.Fatalf("%d rows visible before filtering (%v), want 10", n, err)
	}
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(`select[data-filter="status"]`), "failed"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('select[data-filter="status"]').dispatchEvent(new Event("change"))`)); err != nil {
		t.Fatal(err)
	}
	// Trials 7 (vanilla, task 7) and 17 (hoh@2, task 7) are failed.
	tasks, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#results-grid tbody tr")).filter(r => !r.hidden).map(r => r.dataset.task)`))
	if len(tasks) != 1 || tasks[0] != "task-0007" {
		t.Errorf("status filter failed: rows %v, want [task-0007]", tasks)
	}
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#cmp-a"), "0"), chromedp.SetValue(chromedp.CSS("#cmp-b"), "1"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("cmp-b").dispatchEvent(new Event("change"))`)); err != nil {
		t.Fatal(err)
	}
	summary, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(".compare-summary")))
	if err != nil {
		t.Fatal(err)
	}
	// Tasks 8 (replaced, still scored) and the rest except the missing
	// task 9 have both arms: 9 paired tasks.
	if !strings.Contains(summary, "Paired tasks: 9;") {
		t.Errorf("compare summary %q, want 9 paired tasks", summary)
	}
}
