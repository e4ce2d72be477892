// Package runrecord owns every file a run writes and every row the analysis
// reads: the score row and its CSV codec (the record format), the condition
// catalogue (record names, the arm syntax condition@checkpoint, display
// labels), the token-ledger line, the harness result, the evaluation and
// the runtime checks, the trial spec, stage record and summary, the trials
// index, the replacement line, the runner's failure marker, and
// the layout of a run directory. It imports only the standard library and
// sits below every other layer: experiments writes records through it,
// analysis and cmd read them through it, so neither has to import the other
// for a schema, and a writer and its reader cannot drift apart (each file
// type has a round-trip test here).
//
// Files are written atomically (WriteFile, WriteJSON) or appended and synced
// line by line (Append); readers of appended logs drop a torn last line.
//
// A run directory (RunLayout; PlannedTrial.Dir names each trial directory;
// a project's directories are drawn with ProjectLayout):
//
//	runs/<experiment>/
//	├── .lock                      flock of the runner using the directory
//	├── lock.json                  what the run was started with (Lock)
//	├── plan.json                  every planned trial (PlannedTrial; plan.Trial writes it)
//	├── trials.jsonl               one TrialLine per finished trial
//	├── scores.csv                 every finished trial's Rows
//	├── replacements.jsonl         one Replacement per replaced attempt
//	├── provider-<config>.jsonl    requests to the scripted test-double provider
//	├── docker-runs.txt            Docker run label of every run of the directory
//	├── report/                    hoh view's report (analysis/viewer)
//	├── config.yaml                a copy of the config, when a lab keeps one (ConfigCopyNames)
//	├── preflight/<config>/        CLI logs of the preflight turn before any trial
//	├── inputs/                    copies of the config and provider scripts run with (Inputs)
//	└── <config>/<arm>/<task>/rep-<n>/        a trial (TrialLayout)
//	    ├── trial.json             TrialSpec; written once A_0 is committed
//	    ├── history.git/           workspace history: a commit per stage, tag cp-t
//	    ├── workspace/             the artifact A_t
//	    ├── stages.jsonl           one StageRecord per committed stage
//	    ├── usage.jsonl            token ledger: one Invocation per CLI run
//	    ├── usage-replaced.jsonl   Invocations of replaced and killed attempts (not in any result)
//	    ├── served.jsonl           every response the provider served, by attempt (hoh's relay)
//	    ├── session-state/         CLI state shared by Vanilla Continuation's passes (secrets scrubbed)
//	    ├── extensions.jsonl       one Extension per raise of the step count
//	    ├── agent-view/            a task container's only view of the trial, per invocation (removed with the container):
//	    │   ├── inputs/            the role's inputs (read-only in the container)
//	    │   ├── scratch/           its CLI state, and the Developer's workspace, while it runs (read-write)
//	    │   └── link/              current -> the invocation's working directory, else idle/ (read-only)
//	    ├── .hoh-private/          hoh's own (0700), in no role's view: evaluation key, scratch copies (evaluated/: the export the runtime checks and evaluations run on), processes.jsonl
//	    ├── iter-NN/<role>/        a role stage (StageFiles: StageLayout); role is planner, developer or qa
//	    │   ├── attempt-N/         one CLI invocation (AttemptLayout)
//	    │   │   ├── prompt.md
//	    │   │   ├── state/         the CLI's own state, deleted once the stage commits
//	    │   │   ├── logs/          command.json, stdout.jsonl, stderr.log, events.json, result.json (the adapter's verdict)
//	    │   │   └── result.json    the recorded verdict (Result; hoh's checks may have reclassified it)
//	    │   ├── context/           specification.md, evidence-<t-1>.json, runtime-checks.json
//	    │   ├── plan.json, plan.md planner: D_t (Plan)
//	    │   ├── report.json        developer or QA report (DevReport, QAReport)
//	    │   ├── final-message.md   a final message that did not parse
//	    │   ├── evidence.json      qa: E_t (Evidence)
//	    │   └── artifact/, candidate/   temporary copies
//	    ├── evaluation/cp-t.json   post-run evaluation of checkpoint t (Evaluation)
//	    ├── evaluation/cp-t-verifier/   the evaluator's own output files for checkpoint t
//	    ├── scores.csv             the trial's Rows, written after evaluation
//	    ├── summary.json           Summary; its presence means finished
//	    ├── steps.json, steps/NN-<name>/   a multi-step task's: StepRecords, and each step's own trial directory (no scores.csv)
//	    └── runner-failure.json    Failure: the runner gave up (not a result)
//
// The record format (scores.csv; header required, any order; * marks
// required columns):
//
//	benchmark*   gamecraft | frontierswe | programbench | builtin | any name
//	config*      harness-model configuration, e.g. codex-gpt-5.5-high
//	condition*   vanilla | vanilla-continuation | hoh | wo-plan-update |
//	             wo-evidence-feedback | wo-warm-start
//	checkpoint*  integer >= 1: loop t of HoH-type conditions, pass k of
//	             vanilla-continuation, 1 for vanilla
//	task*        benchmark task identifier
//	family       benchmark family (GameCraft: slug prefix)
//	group        reporting group (GameCraft: Action, Timing, ...)
//	category     official category (FrontierSWE: Implementation, ...)
//	metric*      overall, mechanics, depth, visuals, art, build, reward, pass_rate, ...
//	value*       the metric on the benchmark's reporting scale
//	tokens       cumulative coding-harness tokens (input + output) of the trial
//	             through this checkpoint; empty when unknown
//	rep          repetition, default 1
//	source       where the row comes from (a paper table, a trial key)
package runrecord
