package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hoh-research/hoh/adapters/harness/catalogue"
	"github.com/hoh-research/hoh/experiments/config"
)

func init() {
	register("harnesses", "list the harness catalogue: harnesses [pins [CONFIG.yaml...]] (pins: the npm package@version lines scripts/install-harnesses.sh installs, plus the versions the configs name)", harnessesCmd)
}

func harnessesCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("harnesses", stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, `Usage: hoh harnesses              the catalogue: kinds, executables, npm packages, pinned and oldest versions, wire APIs
       hoh harnesses pins [CONFIG.yaml...]
                                    the npm package@version lines scripts/install-harnesses.sh installs,
                                    plus the versions the configs name`)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	args = fs.Args()
	switch {
	case len(args) >= 1 && args[0] == "pins":
		pins, err := installPins(args[1:])
		if err != nil {
			return err
		}
		for _, p := range pins {
			fmt.Fprintln(stdout, p)
		}
		return nil
	case len(args) > 0:
		fs.Usage()
		return fmt.Errorf("%w: unexpected argument %q", errUsage, args[0])
	}
	const row = "%-9s %-16s %-11s %-32s %-17s %-8s %s\n"
	fmt.Fprintf(stdout, row, "KIND", "NAME", "EXECUTABLE", "NPM PACKAGE", "PINNED (default)", "OLDEST", "WIRE APIS (default first)")
	for _, e := range catalogue.All() {
		fmt.Fprintf(stdout, row, e.Kind, short(e.Display), dash(e.Executable), dash(e.Package),
			dash(strings.Join(e.Pins, ",")), dash(e.Oldest), strings.Join(e.APIs, ", "))
	}
	fmt.Fprintln(stdout, "\nA config's version: may name any release from OLDEST on. The paper's versions (Table 6):")
	for _, e := range catalogue.All() {
		if e.Paper == "" {
			continue
		}
		note := ""
		if e.PaperRan != "" {
			note = fmt.Sprintf("; the paper ran %s, which the npm registry does not have", e.PaperRan)
		}
		fmt.Fprintf(stdout, "  %-9s %s (configs/experiments pin it%s)\n", e.Kind, e.Paper, note)
	}
	return nil
}

// installPins is every catalogue pin, then each further package@version the
// configs name (read leniently, as doctor does: only configs[].harness and
// version matter), refusing versions the adapters do not support.
func installPins(paths []string) ([]string, error) {
	pins := catalogue.NPMPins()
	seen := map[string]bool{}
	for _, p := range pins {
		seen[p] = true
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var exp struct {
			Configs []config.HarnessModel `yaml:"configs"`
		}
		if err := yaml.Unmarshal(data, &exp); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for _, c := range exp.Configs {
			cli, ok := catalogue.Lookup(c.Harness)
			if !ok {
				return nil, fmt.Errorf("%s: config %q: %w", path, c.Label, catalogue.UnknownKind(c.Harness))
			}
			if cli.Package == "" || c.Version == "" || c.Binary != "" {
				continue // described in YAML, the default pin, or a binary of its own
			}
			if err := cli.Check(c.Version); err != nil {
				return nil, fmt.Errorf("%s: config %q: %w", path, c.Label, err)
			}
			if p := cli.Package + "@" + c.Version; !seen[p] {
				seen[p] = true
				pins = append(pins, p)
			}
		}
	}
	return pins, nil
}

// short drops a parenthesised remark from a display name.
func short(s string) string {
	s, _, _ = strings.Cut(s, " (")
	return s
}
