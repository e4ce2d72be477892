package gamecraft

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/runrecord"
)

// buildCheckName names the public build check in CheckResults.
const buildCheckName = "godot-build"

// godotMissing is the Output of an Unavailable build check.
const godotMissing = "Godot 4 is not installed: the build gate cannot run here"

const maxCheckOutput = 16 << 10

// godot4 resolves the configured Godot binary and confirms it is Godot 4.
// It returns "" and the reason when no usable Godot 4 is found.
func (b *Benchmark) godot4(ctx context.Context) (string, string) {
	bin := b.Opts.GodotBin
	if bin == "" {
		bin = "godot"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return "", fmt.Sprintf("%s (%q not found)", godotMissing, bin)
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	version := strings.TrimSpace(string(out))
	if err != nil || !strings.HasPrefix(version, "4.") {
		return "", fmt.Sprintf("%s (%s --version gave %q)", godotMissing, path, firstLine(version))
	}
	return path, ""
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// Check runs the public build check: Godot's headless launch of the project
// in dir/game, as the verifier's build gate does. Only the command and its
// output are reported, never rubric text.
func (b *Benchmark) Check(ctx context.Context, t benchmark.Task, dir string) ([]runrecord.CheckResult, error) {
	if _, err := b.lookup(t); err != nil {
		return nil, err
	}
	return []runrecord.CheckResult{b.buildCheck(ctx, dir)}, nil
}

func (b *Benchmark) buildCheck(ctx context.Context, dir string) runrecord.CheckResult {
	game := filepath.Join(dir, gameDir)
	res := runrecord.CheckResult{Name: buildCheckName, ExitCode: -1}
	bin, why := b.godot4(ctx)
	if bin == "" {
		res.Command = fmt.Sprintf("godot --headless --path %s --quit-after 5", game)
		res.Unavailable = true
		res.Output = why
		return res
	}
	args := []string{"--headless", "--path", game, "--quit-after", "5"}
	res.Command = bin + " " + strings.Join(args, " ")
	if _, err := os.Stat(filepath.Join(game, "project.godot")); err != nil {
		res.Output = "no project.godot in " + game
		return res
	}
	timeout := b.Opts.BuildTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, bin, args...)
	cmd.Dir = game
	cmd.WaitDelay = 2 * time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		res.ExitCode = 0
	case errors.As(err, &exitErr):
		res.ExitCode = exitErr.ExitCode()
	}
	text := out.String()
	if cctx.Err() == context.DeadlineExceeded {
		text += fmt.Sprintf("\n[build check timed out after %s]", timeout)
	}
	fatal := fatalLine(text)
	res.Passed = err == nil && fatal == ""
	if err == nil && fatal != "" {
		text += "\n[build check failed: fatal error line: " + fatal + "]"
	}
	if len(text) > maxCheckOutput {
		text = "[... output truncated ...]\n" + text[len(text)-maxCheckOutput:]
	}
	res.Output = text
	return res
}

// fatalLine finds a line that marks a fatal error in Godot's output. Godot
// can exit 0 after script parse errors, so the exit code alone is not enough.
func fatalLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "SCRIPT ERROR:") || strings.HasPrefix(t, "FATAL") ||
			strings.Contains(t, "Parse Error:") || strings.Contains(t, "Failed to load script") {
			return t
		}
	}
	return ""
}
