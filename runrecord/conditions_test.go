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
