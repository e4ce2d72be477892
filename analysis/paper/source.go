package paper

import (
	"io/fs"
	"path"
	"path/filepath"
	"slices"

	"github.com/hoh-research/hoh/analysis/results"
	"github.com/hoh-research/hoh/runrecord"
)

// Source is one file of per-task results with optional filters: the
// paper's experiments overlap (the Codex Vanilla and HoH@3 rows appear in
// several tables), so a table or figure config names which arms it takes
// from which file.
type Source struct {
	Path    string   `yaml:"path"`
	Configs []string `yaml:"configs"` // empty: all
	Arms    []string `yaml:"arms"`    // empty: all
}

// Rows reads the source, its path relative to dir, from fsys (nil: the
// operating system's files) and keeps the rows its filters select.
func (s Source) Rows(fsys fs.FS, dir string) ([]runrecord.Row, error) {
	var rows []runrecord.Row
	var err error
	switch {
	case fsys != nil:
		rows, err = results.ReadFS(fsys, path.Join(dir, s.Path))
	case filepath.IsAbs(s.Path) || dir == "":
		rows, err = runrecord.ReadScores(s.Path)
	default:
		rows, err = runrecord.ReadScores(filepath.Join(dir, s.Path))
	}
	if err != nil {
		return nil, err
	}
	kept := rows[:0]
	for _, r := range rows {
		if (len(s.Configs) == 0 || slices.Contains(s.Configs, r.Config)) &&
			(len(s.Arms) == 0 || slices.Contains(s.Arms, r.Arm().String())) {
			kept = append(kept, r)
		}
	}
	return kept, nil
}
