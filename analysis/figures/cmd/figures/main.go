// Command figures draws every figure the paper's per-task data supports
// (`make figures`) and prints why the others are skipped. Run it from the
// repository root: go run ./analysis/figures/cmd/figures -out figures
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/hoh-research/hoh/analysis/figures"
)

func main() {
	root := flag.String("root", ".", "repository root (holds results/paper)")
	out := flag.String("out", "figures", "output directory")
	flag.Parse()
	outs, skips, err := figures.PaperAll(*root, figures.Options{OutDir: *out})
	for _, o := range outs {
		fmt.Println("wrote", o.Path)
	}
	for _, s := range skips {
		fmt.Printf("skipped %s: %s\n", s.Figure, s.Reason)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "figures:", err)
		os.Exit(1)
	}
}
