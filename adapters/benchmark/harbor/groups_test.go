package harbor

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The shipped grouping is the paper's Table 11 as transcribed in
// results/paper/tasks.csv: 15 tasks, 4 / 9 / 2.
func TestShippedGroupingIsTable11(t *testing.T) {
	g := defaultGroups()
	count := map[string]int{}
	for _, v := range g {
		count[v]++
	}
	if count["implementation"] != 4 || count["performance"] != 9 || count["research"] != 2 || count[GroupExcluded] != 2 {
		t.Fatalf("grouping counts %v, want 4/9/2 and 2 excluded", count)
	}
	f, err := os.Open("../../../results/paper/tasks.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, r := range rows {
		if r[0] != "frontierswe" {
			continue
		}
		seen++
		if want := strings.ToLower(r[6]); g[r[1]] != want {
			t.Errorf("%s: shipped group %q, transcription %q", r[1], g[r[1]], want)
		}
	}
	if seen != 15 {
		t.Fatalf("transcription has %d FrontierSWE tasks", seen)
	}
}

func gatedDataset(t *testing.T) string {
	root := t.TempDir()
	for id, cat := range map[string]string{"git-to-zig": "c-to-zig", "frogsgame-rl": "rl", "optimizer-design": "ml"} {
		writeTaskDir(t, root, id, "schema_version = \"1.3\"\n[metadata]\ncategory = \""+cat+"\"\n[environment]\ndocker_image = \"x:local\"\n")
		os.MkdirAll(filepath.Join(root, id, "tests"), 0o755)
		os.WriteFile(filepath.Join(root, id, "tests", "test.sh"), []byte("true\n"), 0o644)
	}
	return root
}

// A real FrontierSWE task keeps its fine category as family and gets the
// paper's group; a task the paper excluded is noted; an ungrouped task is a
// plan-time error naming it and how to group it.
func TestFrontierSWEGroupingAtPlanTime(t *testing.T) {
	root := gatedDataset(t)
	b := &Benchmark{Dataset: "frontierswe", Root: root, Gate: &Gate{}}
	ts, err := b.Tasks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]int{}
	for i, tk := range ts {
		byID[tk.ID] = i
	}
	if _, ok := byID["frogsgame-rl"]; ok || len(ts) != 2 {
		t.Fatalf("tasks %+v: want git-to-zig and optimizer-design, frogsgame-rl excluded", ts)
	}
	if g := ts[byID["git-to-zig"]]; g.Family != "c-to-zig" || g.Category != "implementation" || g.Group != "Implementation" {
		t.Errorf("git-to-zig: family %q category %q group %q", g.Family, g.Category, g.Group)
	}
	if notes := strings.Join(b.LoadNotes(), "\n"); !strings.Contains(notes, "frogsgame-rl") {
		t.Errorf("notes %q do not name the excluded task", notes)
	}

	writeTaskDir(t, root, "new-task", "schema_version = \"1.3\"\n[metadata]\ncategory = \"x\"\n[environment]\ndocker_image = \"x:local\"\n")
	os.MkdirAll(filepath.Join(root, "new-task", "tests"), 0o755)
	os.WriteFile(filepath.Join(root, "new-task", "tests", "test.sh"), []byte("true\n"), 0o644)
	if _, err := b.Tasks(context.Background()); err == nil || !strings.Contains(err.Error(), "new-task") || !strings.Contains(err.Error(), "groups") {
		t.Fatalf("ungrouped task: %v", err)
	}
	// The config's grouping file places it (and may regroup a shipped task).
	p := filepath.Join(t.TempDir(), "groups.csv")
	os.WriteFile(p, []byte("task,group\nnew-task,research\ngit-to-zig,performance\n"), 0o644)
	g, err := loadGroups(p)
	if err != nil {
		t.Fatal(err)
	}
	b.Groups = g
	ts, err = b.Tasks(context.Background())
	if err != nil || len(ts) != 3 {
		t.Fatalf("with override: %v %+v", err, ts)
	}
	for _, tk := range ts {
		if tk.ID == "git-to-zig" && tk.Category != "performance" {
			t.Errorf("override ignored: %+v", tk)
		}
	}
	os.WriteFile(p, []byte("task,group\nnew-task,speed\n"), 0o644)
	if _, err := loadGroups(p); err == nil || !strings.Contains(err.Error(), p+":2") {
		t.Errorf("bad group: %v", err)
	}
}

// Plan-time refusal: Harbor's own examples that use features hoh does not
// run are refused by name with the reason, before any agent starts; the
// plain ones and the multi-step ones are planned.
func TestTasksRefuseUnsupportedFeaturesByName(t *testing.T) {
	b := &Benchmark{Dataset: "harbor", Root: filepath.Join(harborTasks, "harbor-examples", "tasks")}
	ts, err := b.Tasks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, tk := range ts {
		ids[tk.ID] = true
	}
	if !ids["hello-world"] || !ids["hello-mcp"] || !ids["hello-multi-step-simple"] || !ids["hello-multi-step-advanced"] ||
		!ids["separate-verifier-multi-step"] || ids["hello-world-bat"] || ids["hello-multi-step-bat"] || !ids["separate-verifier-environment"] {
		t.Errorf("planned tasks %v", ids)
	}
	notes := strings.Join(b.LoadNotes(), "\n")
	for _, want := range []string{
		"refused task hello-world-bat: ", "environment.os = windows: hoh runs Linux containers only",
		"refused task hello-multi-step-bat: ",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

// A prebuilt image absent from the local engine is refused at plan time,
// named with how to provide it (nothing can be pulled here).
func TestMissingPrebuiltImageRefusedAtPlanTime(t *testing.T) {
	b := newBench(t, nil)
	root := t.TempDir()
	dir := writeTaskDir(t, root, "absent", "schema_version = \"1.3\"\n[environment]\ndocker_image = \"hoh-test-absent-image:never-built\"\n")
	os.MkdirAll(filepath.Join(dir, "tests"), 0o755)
	os.WriteFile(filepath.Join(dir, "tests", "test.sh"), []byte("true\n"), 0o644)
	writeTaskDir(t, root, "buildable", "schema_version = \"1.3\"\n")
	os.MkdirAll(filepath.Join(root, "buildable", "tests"), 0o755)
	os.MkdirAll(filepath.Join(root, "buildable", "environment"), 0o755)
	os.WriteFile(filepath.Join(root, "buildable", "tests", "test.sh"), []byte("true\n"), 0o644)
	os.WriteFile(filepath.Join(root, "buildable", "environment", "Dockerfile"), []byte("FROM scratch\n"), 0o644)
	b.Root = root
	ts, err := b.Tasks(context.Background())
	if err != nil || len(ts) != 1 || ts[0].ID != "buildable" {
		t.Fatalf("tasks %+v, %v: want only buildable", ts, err)
	}
	notes := strings.Join(b.LoadNotes(), "\n")
	if !strings.Contains(notes, `refused task absent: `) || !strings.Contains(notes, `"hoh-test-absent-image:never-built" is not present locally`) || !strings.Contains(notes, "docker load") {
		t.Errorf("notes: %s", notes)
	}
}

// A multi-key reward.json without "reward" keeps every number as a metric,
// the primary one from reward_key (real Docker, the oracle's verifier run);
// without reward_key the failure names the keys and the option.
func TestMultiKeyRewardKeepsEveryKey(t *testing.T) {
	b := newBench(t, nil)
	b.RewardKey = "correctness"
	ctx := context.Background()
	tk := task(t, b, "speedup")
	tr, err := b.RunTrial(ctx, tk, Oracle{}, t.TempDir())
	if err != nil || tr.Evaluation == nil {
		t.Fatalf("%v %+v", err, tr)
	}
	m := tr.Evaluation.Metrics
	if m["reward"] != 1 || m["correctness"] != 1 || m["speedup"] != 1.5 || m["detail.runs"] != 3 {
		t.Fatalf("metrics %v", m)
	}
	b.RewardKey = ""
	tr, err = b.RunTrial(ctx, tk, Oracle{}, t.TempDir())
	if err != nil || tr.Evaluation == nil || !strings.Contains(tr.Evaluation.Error, "reward_key") || !strings.Contains(tr.Evaluation.Error, "correctness, detail, speedup") {
		t.Fatalf("%v %+v", err, tr.Evaluation)
	}
}
