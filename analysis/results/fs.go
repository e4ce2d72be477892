package results

import (
	"fmt"
	"io/fs"

	"github.com/hoh-research/hoh/runrecord"
)

// ReadFS reads one record file from a file system (the binary's embedded
// paper data); like ReadFile, errors name the file and rows without a source
// are given the file's name.
func ReadFS(fsys fs.FS, name string) ([]runrecord.Row, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := runrecord.DecodeScores(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for i := range rows {
		if rows[i].Source == "" {
			rows[i].Source = name
		}
	}
	return rows, nil
}
