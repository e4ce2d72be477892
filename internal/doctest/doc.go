// Package doctest holds the test that runs the documentation's commands as
// written, from the root of a fresh clone (doctest_test.go). What counts
// as a command:
//
//   - README.md and docs/*.md: every line of a fenced block whose info
//     string is "sh run" (```sh run); a line ending in \ continues on the
//     next. Every README block that holds a command (its first line starts
//     with bin/hoh, hoh, make or scripts/) must be so marked.
//   - configs/examples/*.yaml: every line of the leading comment block
//     indented by exactly three spaces after '#' ("#   CMD"); a line
//     ending in && or \ continues on the next.
//
// A command that cannot run on a machine without a model or a key is
// listed, with the reason, in notRunnable; nothing else is left out.
package doctest
