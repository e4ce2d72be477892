package harbor

import (
	_ "embed"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strings"
)

// frontierSWEGroups is the paper's FrontierSWE grouping (Table 11: 15 tasks
// as implementation / performance / research; Table 12: the two tasks it
// excluded). A task's own [metadata].category stays its family.
//
//go:embed frontierswe_groups.csv
var frontierSWEGroups string

// GroupExcluded marks a task the paper left out; it is excluded with a note.
const GroupExcluded = "excluded"

var groupNames = map[string]bool{"implementation": true, "performance": true, "research": true, GroupExcluded: true}

// defaultGroups returns the shipped grouping, task id -> group.
func defaultGroups() map[string]string {
	g, err := parseGroups(strings.NewReader(frontierSWEGroups), "frontierswe_groups.csv")
	if err != nil {
		panic(err) // the embedded file is checked by tests
	}
	return g
}

// loadGroups reads a task,group CSV (a header row, then one task per row);
// its entries override the shipped grouping.
func loadGroups(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	over, err := parseGroups(f, path)
	if err != nil {
		return nil, err
	}
	g := defaultGroups()
	for k, v := range over {
		g[k] = v
	}
	return g, nil
}

func parseGroups(r io.Reader, name string) (map[string]string, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(rows) == 0 || len(rows[0]) != 2 || rows[0][0] != "task" || rows[0][1] != "group" {
		return nil, fmt.Errorf("%s:1: want the header task,group", name)
	}
	out := map[string]string{}
	for i, row := range rows[1:] {
		g := strings.ToLower(strings.TrimSpace(row[1]))
		if !groupNames[g] {
			return nil, fmt.Errorf("%s:%d: group %q (want implementation, performance, research or excluded)", name, i+2, row[1])
		}
		out[strings.TrimSpace(row[0])] = g
	}
	return out, nil
}

// groupTask sets a gated task's reporting group from the grouping, keeping
// its own metadata category as its family. A task whose category is itself a
// group name (synthetic datasets) needs no entry.
func groupTask(l *Loaded, groups map[string]string) (excluded bool, err error) {
	t := &l.Task
	fam := t.Category
	g, ok := groups[t.ID]
	if !ok && groupNames[strings.ToLower(fam)] && strings.ToLower(fam) != GroupExcluded {
		g, ok = strings.ToLower(fam), true
	}
	if !ok {
		return false, fmt.Errorf("task %s (metadata.category %q) is not in the FrontierSWE grouping (the paper's Table 11): add a row \"%s,<implementation|performance|research>\" to a CSV named by the benchmark option groups", t.ID, fam, t.ID)
	}
	if g == GroupExcluded {
		return true, nil
	}
	if !strings.EqualFold(fam, g) {
		t.Family = fam
	}
	t.Category = g
	t.Group = strings.ToUpper(g[:1]) + g[1:]
	return false, nil
}
