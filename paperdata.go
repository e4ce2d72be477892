// Package hoh embeds the paper's data into the hoh binary: the per-task
// results transcribed from its appendix (results/paper), its printed
// aggregates (results/paper/reported) and the table and figure configs
// (configs/paper). The files in the repository are the editable source of
// truth; `hoh report` and `hoh plot` read these copies, so the binary
// reproduces the paper from any directory without the checkout.
package hoh

import "embed"

// Paper holds results/paper and configs/paper under those paths.
//
//go:embed results/paper configs/paper
var Paper embed.FS
