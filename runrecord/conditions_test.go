package runrecord

import "testing"

func TestParseArm(t *testing.T) {
	for in, want := range map[string]Arm{"hoh@3": {HoH, 3}, "vanilla": {Vanilla, 1}, "vanilla-continuation@2": {VanillaContinuation, 2}} {
		got, err := ParseArm(in)
		if err != nil || got != want {
			t.Errorf("ParseArm(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"hoh@0", "hoh@x", "@2", ""} {
		if _, err := ParseArm(bad); err == nil {
			t.Errorf("ParseArm(%q) accepted", bad)
		}
	}
}

func TestArmLabels(t *testing.T) {
	for arm, want := range map[Arm]string{
		{Vanilla, 1}: "Vanilla", {HoH, 3}: "HoH@3", {VanillaContinuation, 2}: "Vanilla Cont.@2",
		{WithoutPlanUpdate, 3}: "w/o Plan Update", {WithoutWarmStart, 2}: "w/o Warm-Start@2",
		{WithoutEvidence, 3}: "w/o Evidence Feedback", {"my-condition", 4}: "my-condition@4",
	} {
		if got := arm.Label(); got != want {
			t.Errorf("%v.Label() = %q, want %q", arm, got, want)
		}
	}
	if ConditionLabel("my-condition") != "my-condition" || ConditionLabel(WithoutWarmStart) != "w/o Warm-Start" {
		t.Error("ConditionLabel")
	}
}
