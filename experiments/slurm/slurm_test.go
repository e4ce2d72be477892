package slurm

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestArrayListJoinsRuns(t *testing.T) {
	for in, want := range map[string]string{"1 2 3 4": "1-4", "6 2 1 4": "1-2,4,6", "3": "3"} {
		var ks []int
		for _, f := range strings.Fields(in) {
			k := 0
			for _, c := range f {
				k = k*10 + int(c-'0')
			}
			ks = append(ks, k)
		}
		if got := arrayList(ks); got != want {
			t.Errorf("arrayList(%v) = %q, want %q", ks, got, want)
		}
	}
}

// The scripts run hoh with the paths as given, whatever they hold: a fake
// hoh that prints its arguments stands in, under a directory with a space
// and a quote.
func TestScriptsQuotePaths(t *testing.T) {
	base := filepath.Join(t.TempDir(), "it's a dir")
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	hoh := filepath.Join(base, "hoh")
	args := filepath.Join(base, "args")
	if err := os.WriteFile(hoh, []byte("#!/bin/sh\nfor a in \"$@\"; do echo \"[$a]\"; done >> \""+args+"\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	l := Layout{Dir: filepath.Join(base, "run")}
	j := Jobs{Hoh: hoh, Config: filepath.Join(base, "c.yaml"), Workdir: base, Name: "x", Shards: 2, Resources: Resources{CPUsPerTask: 2, Time: "1:00:00", Extra: []string{"--qos=long"}}}
	if err := WriteScripts(l, j); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(l.ArrayScript())
	for _, d := range []string{"#SBATCH --requeue", "#SBATCH --cpus-per-task=2", "#SBATCH --time=1:00:00", "#SBATCH --qos=long"} {
		if !strings.Contains(string(a), d+"\n") {
			t.Errorf("array.sh lacks %q:\n%s", d, a)
		}
	}
	cmd := exec.Command("bash", l.ArrayScript())
	cmd.Env = append(os.Environ(), "SLURM_ARRAY_TASK_ID=2", "SLURM_JOB_ID=77")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("array.sh: %v\n%s", err, out)
	}
	got, _ := os.ReadFile(args)
	want := "[run]\n[--shard]\n[2/2]\n[--output]\n[" + l.Shard(2) + "]\n[" + j.Config + "]\n"
	if string(got) != want {
		t.Errorf("hoh got\n%s\nwant\n%s", got, want)
	}
	if job, code, ok := Exit(l, 2); !ok || job != "77" || code != 0 {
		t.Errorf("exit file: %q %d %v", job, code, ok)
	}
}
