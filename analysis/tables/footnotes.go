package tables

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hoh-research/hoh/runrecord"
)

// ImportedTokensNote says where an imported row's tokens come from (they
// have no usage.jsonl).
const ImportedTokensNote = "Imported Harbor rows (%s): tokens are the trial's agent_result (n_input_tokens + n_output_tokens), " +
	"converted to hoh's convention (input includes cache reads and cache writes; claude-code's cache writes are added from " +
	"its trajectory.json, and without one its input undercounts), not a usage.jsonl; `hoh import harbor` says which trials could not tell."

// fewerTasks lists the cells of a benchmark's primary metric over all its
// tasks (not a family's or group's scope) whose mean is
// over fewer tasks than the column header counts (an arm without a record
// of some task: refused, not run or not imported).
func (b *builder) fewerTasks(t *Table) []string {
	var out []string
	for _, c := range t.Cells() {
		for _, bm := range b.lay.benches {
			if c.Benchmark == bm.bench && c.Metric == bm.metric && c.Scope == "all" && c.Baseline.IsZero() && c.N > 0 && c.N < bm.tasks {
				out = append(out, fmt.Sprintf("%s %s %s: mean over %d of the header's %d tasks (no record of the others)",
					c.Benchmark, configLabel(c.Config), armLabel(c.Arm), c.N, bm.tasks))
			}
		}
	}
	return out
}

// importedConfigs lists the configurations with rows imported from
// Harbor, and whether every row is imported (then no usage.jsonl is behind
// any token count).
func (b *builder) importedConfigs() ([]string, bool) {
	out, all := b.ix.SourceConfigs(func(source string) bool {
		return strings.Contains(source, runrecord.ImportedSourceMark)
	})
	if out == nil {
		out = []string{} // as before: an empty list, never nil
	}
	sort.Strings(out)
	return out, all && len(out) > 0
}

// tokensNote is TokensNote unless every row is imported.
func (t *Table) tokensNote() string {
	if !t.CountsTokens() || t.onlyImported {
		return ""
	}
	return TokensNote
}

// importedNote is ImportedTokensNote for the table, "" when it has no
// token column or no imported rows.
func (t *Table) importedNote() string {
	if len(t.Imported) == 0 || !t.CountsTokens() {
		return ""
	}
	return fmt.Sprintf(ImportedTokensNote, strings.Join(t.Imported, ", "))
}
