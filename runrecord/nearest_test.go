package runrecord

import "testing"

func TestNearest(t *testing.T) {
	names := []string{"run", "report", "conditions", "configs", "status", "show"}
	for in, want := range map[string]string{
		"rnu":      "run",        // a swap is one edit
		"RUN":      "run",        // case
		"conditon": "conditions", // two deletions
		"reprot":   "report",
		"stauts":   "status",
		"xyz":      "",
		"plot":     "", // no command within one edit
	} {
		if got := Nearest(in, names); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", in, got, want)
		}
	}
}
