package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/hoh-research/hoh/adapters/harness/catalogue"
)

func init() {
	register("harnesses", "list the harness catalogue: harnesses [pins] (pins: the npm package@version lines scripts/install-harnesses.sh installs)", harnessesCmd)
}

func harnessesCmd(args []string, stdout, stderr io.Writer) error {
	switch {
	case len(args) == 1 && args[0] == "pins":
		for _, p := range catalogue.NPMPins() {
			fmt.Fprintln(stdout, p)
		}
		return nil
	case len(args) > 0:
		fmt.Fprintln(stderr, "Usage: hoh harnesses [pins]")
		return fmt.Errorf("%w: unexpected argument %q", errUsage, args[0])
	}
	fmt.Fprintf(stdout, "%-9s %-16s %-11s %-30s %-9s %s\n", "KIND", "NAME", "EXECUTABLE", "NPM PACKAGE", "PINNED", "WIRE APIS (default first)")
	for _, e := range catalogue.All() {
		fmt.Fprintf(stdout, "%-9s %-16s %-11s %-30s %-9s %s\n", e.Kind, short(e.Display), dash(e.Executable), dash(e.Package),
			dash(strings.Join(e.Pins, ",")), strings.Join(e.APIs, ", "))
	}
	return nil
}

// short drops a parenthesised remark from a display name.
func short(s string) string {
	s, _, _ = strings.Cut(s, " (")
	return s
}
