package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/hoh-research/hoh/analysis/tables"
)

func init() {
	register("report", "print a table: report table1|table2|table3|tasks [--results PATH...] [--format text|markdown|latex|csv]", runReport)
}

func runReport(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report", stderr)
	var resultPaths multiFlag
	fs.Var(&resultPaths, "results", "result files or folders in the record format (repeatable); default: the paper's per-task data")
	format := fs.String("format", "text", "output format: text, markdown, latex or csv")
	config := fs.String("config", "", "table config YAML (default configs/paper/NAME.yaml)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: hoh report %s [flags]\n", strings.Join(tables.Names, "|"))
		fs.PrintDefaults()
	}
	name, err := parseNamed(fs, args)
	if err != nil {
		return err
	}
	if name == "" {
		fs.Usage()
		return fmt.Errorf("%w: which table? (%s)", errUsage, strings.Join(tables.Names, ", "))
	}
	path := *config
	if path == "" {
		path = filepath.Join("configs", "paper", name+".yaml")
	}
	if *format == "text" || *format == "markdown" {
		warnScripted(stdout, resultPaths)
	} else {
		warnScripted(stderr, resultPaths)
	}
	return tables.Run(name, path, resultPaths, *format, stdout)
}
