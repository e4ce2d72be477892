package selector

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/benchmark/gamecraft"
	"github.com/hoh-research/hoh/internal/testenv"
)

func realTasks(t *testing.T) []benchmark.Task {
	t.Helper()
	root := testenv.SharedPath(t, "benchmarks", "gamecraft-bench")
	b, err := gamecraft.Load(root)
	if err != nil {
		t.Fatalf("GameCraft-Bench data at %s is required: %v", root, err)
	}
	tasks, _ := b.Tasks(context.Background())
	return tasks
}

func ids(ts []benchmark.Task) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}

func TestStratifiedOnRealCheckout(t *testing.T) {
	tasks := realTasks(t)
	a, err := Stratified(tasks, 3, ByFamily, PaperSeed)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 45 {
		t.Fatalf("got %d tasks, want 45", len(a))
	}
	perFamily := map[string]int{}
	for _, x := range a {
		perFamily[x.Family]++
	}
	if len(perFamily) != 15 {
		t.Fatalf("got %d families", len(perFamily))
	}
	for f, n := range perFamily {
		if n != 3 {
			t.Errorf("family %s: %d tasks", f, n)
		}
	}
	// Stable for a seed, also when the input order changes.
	reversed := append([]benchmark.Task(nil), tasks...)
	for i, j := 0, len(reversed)-1; i < j; i, j = i+1, j-1 {
		reversed[i], reversed[j] = reversed[j], reversed[i]
	}
	b, _ := Stratified(reversed, 3, ByFamily, PaperSeed)
	if !reflect.DeepEqual(ids(a), ids(b)) {
		t.Error("same seed gave different selections")
	}
	c, _ := Stratified(tasks, 3, ByFamily, PaperSeed+1)
	if reflect.DeepEqual(ids(a), ids(c)) {
		t.Error("different seeds gave the same selection")
	}
	// The paper's subset was built incrementally, so only its composition is
	// reproducible; report the membership overlap for the record.
	paper := map[string]bool{}
	for _, id := range Paper45 {
		paper[id] = true
	}
	overlap := 0
	for _, x := range a {
		if paper[x.ID] {
			overlap++
		}
	}
	t.Logf("fresh seed-%d sample shares %d of 45 tasks with the paper's list", PaperSeed, overlap)
	viaSpec, err := Select(tasks, "stratified:3")
	if err != nil || !reflect.DeepEqual(ids(viaSpec), ids(a)) {
		t.Errorf("Select stratified:3 differs from Stratified with PaperSeed: %v", err)
	}
	if _, err := Stratified(tasks, 5, ByFamily, 1); err == nil || !strings.Contains(err.Error(), "fewer than 5") {
		t.Errorf("short stratum: %v", err)
	}
}

func TestPaper45ExistsThreePerFamily(t *testing.T) {
	tasks := realTasks(t)
	sel, err := Select(tasks, "named:paper-45")
	if err != nil {
		t.Fatal(err)
	}
	if len(sel) != 45 {
		t.Fatalf("got %d", len(sel))
	}
	perFamily := map[string]int{}
	perGroup := map[string]int{}
	for _, x := range sel {
		perFamily[x.Family]++
		perGroup[x.Group]++
	}
	for f, n := range perFamily {
		if n != 3 {
			t.Errorf("family %s: %d", f, n)
		}
	}
	for g, n := range perGroup {
		if n != 9 {
			t.Errorf("group %s: %d", g, n)
		}
	}
	if len(perFamily) != 15 || len(perGroup) != 5 {
		t.Errorf("families %d groups %d", len(perFamily), len(perGroup))
	}
}

func TestByIDsAndGlob(t *testing.T) {
	tasks := []benchmark.Task{{ID: "a-1"}, {ID: "a-2"}, {ID: "b-1"}}
	got, err := ByIDs(tasks, []string{"b-1", "a-1"})
	if err != nil || strings.Join(ids(got), ",") != "b-1,a-1" {
		t.Errorf("ByIDs: %v %v", ids(got), err)
	}
	if _, err := ByIDs(tasks, []string{"c-9"}); err == nil || !strings.Contains(err.Error(), "c-9") {
		t.Errorf("unknown id: %v", err)
	}
	if _, err := ByIDs(tasks, []string{"a-1", "a-1"}); err == nil {
		t.Error("duplicate id accepted")
	}
	got, err = ByGlob(tasks, []string{"a-*"})
	if err != nil || strings.Join(ids(got), ",") != "a-1,a-2" {
		t.Errorf("ByGlob: %v %v", ids(got), err)
	}
	if _, err := ByGlob(tasks, []string{"z*"}); err == nil {
		t.Error("empty pattern match accepted")
	}
	if _, err := ByGlob(tasks, []string{"[a"}); err == nil {
		t.Error("bad pattern accepted")
	}
	got, err = Select(tasks, "glob:b-*,a-2")
	if err != nil || strings.Join(ids(got), ",") != "a-2,b-1" {
		t.Errorf("Select glob: %v %v", ids(got), err)
	}
	if _, err := Select(tasks, "named:nope"); err == nil {
		t.Error("unknown named selection accepted")
	}
}
