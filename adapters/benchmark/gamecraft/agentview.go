package gamecraft

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/sandbox"
)

// The paths GameCraft-Bench's tasks address (upstream's local runner binds
// the same ones; /tests appears only to the verifier).
const (
	workspacePath = "/workspace"
	GamePath      = "/workspace/game"
	AssetsPath    = "/workspace/assets"
	ToolsPath     = "/workspace/tools"
	LogsPath      = "/logs"
	TestsPath     = "/tests"
)

// Agent environments (option agent_environment).
const (
	EnvHost   = "host"   // per-invocation user+mount namespace on the host (the paper's setting)
	EnvDocker = "docker" // the task's environment/Dockerfile through the Harbor path (DockerBenchmark)
)

var _ benchmark.AgentView = (*Benchmark)(nil)

// AgentMounts implements benchmark.AgentView: /workspace is the stage's
// scratch folder (what an agent writes there, such as a screenshot at
// /workspace/frame.png, is kept with the stage), /workspace/game the role's
// artifact (writable for the Developer, read-only otherwise), the task's
// workspace template, the checkout's asset libraries (assets/library and
// assets/library-oga at /workspace/assets/...) and its public tools
// (/workspace/tools) read-only, /logs an empty
// scratch tmpfs, and /tests and the checkout's tasks/ empty read-only
// tmpfs: no rubric is visible to an agent, at /tests or at its host path.
func (b *Benchmark) AgentMounts(t benchmark.Task, workDir, scratch string, writable bool) ([]sandbox.Mount, error) {
	td, err := b.lookup(t)
	if err != nil {
		return nil, err
	}
	if b.Opts.AgentEnvironment != "" && b.Opts.AgentEnvironment != EnvHost {
		return nil, fmt.Errorf("gamecraft: agent_environment %q is not available; use %q", b.Opts.AgentEnvironment, EnvHost)
	}
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		return nil, err
	}
	m := []sandbox.Mount{{Source: scratch, Target: workspacePath, Writable: true}}
	game := filepath.Join(workDir, gameDir)
	if writable {
		if err := os.MkdirAll(game, 0o755); err != nil {
			return nil, err
		}
	}
	if isDir(game) {
		m = append(m, sandbox.Mount{Source: game, Target: GamePath, Writable: writable})
	} else {
		m = append(m, sandbox.Mount{Target: GamePath}) // no game yet: an empty, read-only folder
	}
	// The task's own workspace template (upstream copies it into /workspace;
	// no task of the checkout has one), then the shared asset libraries
	// scripts/fetch_assets.py and fetch_oga_assets.py put in the checkout.
	if entries, err := os.ReadDir(filepath.Join(td.Task.Dir, "workspace")); err == nil {
		for _, e := range entries {
			if e.Name() != gameDir {
				m = append(m, sandbox.Mount{Source: filepath.Join(td.Task.Dir, "workspace", e.Name()), Target: filepath.Join(workspacePath, e.Name())})
			}
		}
	}
	for _, lib := range []string{"library", "library-oga"} {
		if src := filepath.Join(b.Root, "assets", lib); isDir(src) {
			m = append(m, sandbox.Mount{Source: src, Target: filepath.Join(AssetsPath, lib)})
		}
	}
	if tools := filepath.Join(b.Root, "tools"); isDir(tools) {
		m = append(m, sandbox.Mount{Source: tools, Target: ToolsPath})
	}
	// Last, the checkout's tasks/ (every rubric) is hidden at its host path
	// too: the spec is in the prompt, and the binds above are already made.
	return append(m, sandbox.Mount{Target: LogsPath, Writable: true}, sandbox.Mount{Target: TestsPath},
		sandbox.Mount{Target: filepath.Join(b.Root, "tasks")}), nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

var _ benchmark.RoleEnvironment = (*Benchmark)(nil)

// RoleEnvironment implements benchmark.RoleEnvironment: whether the public
// screenshot tool can run here (Godot 4 and Xvfb installed) and, if not,
// that nothing may be claimed as seen.
func (b *Benchmark) RoleEnvironment(ctx context.Context, _ benchmark.Task) string {
	_, missing := b.godot4(ctx)
	if _, err := exec.LookPath("Xvfb"); err != nil {
		if missing != "" {
			missing += "; "
		}
		missing += "Xvfb is not installed (the screenshot tool renders on a virtual display)"
	}
	return screenshotText(missing, "they are kept with this stage's records")
}

// screenshotText is RoleEnvironment's text given what is missing ("":
// nothing) and what becomes of the frames saved under /workspace.
func screenshotText(missing, kept string) string {
	if missing == "" {
		return "Screenshots can be taken here: Godot 4 and Xvfb are installed. `" + ToolsPath + "/screenshot.sh --path " + GamePath +
			" -- --out " + workspacePath + "/NAME.png --frames 60` captures a frame of the game (add `--scenario ID` after `--` for a scenario). " +
			"Save frames under " + workspacePath + "/ (" + kept + ") and cite every frame you looked at in an " +
			"execution record of type \"screenshot\" with its path and what it shows."
	}
	return "Screenshots and replays cannot be taken on this machine: " + missing + ". Do not claim to have seen the game's screens: " +
		"an execution record of type \"screenshot\" or \"replay\" must cite a file you captured, and a claim that can only be " +
		"judged by looking at the running game is a gap here (not observable on this machine)."
}
