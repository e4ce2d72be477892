package harbor

import (
	"fmt"
	"strings"
)

// Gate turns a FrontierSWE reward.json into the trial's score. Field names
// are configurable; dotted names reach into nested objects ("a.b").
//
//	implementation: correctness                      (in [0,1])
//	performance:    0.5*correctness if correctness < 1, else 0.5 + 0.5*speedup (can exceed 1)
//	research:       the raw reward
type Gate struct {
	CategoryKey      string // task.toml [metadata] key naming the category; default "category"
	CorrectnessField string // default "correctness"
	SpeedupField     string // default "speedup"
	RewardField      string // default "reward"
}

// defaultGate is FrontierSWE's gate with the default field names.
var defaultGate = Gate{CategoryKey: "category", CorrectnessField: "correctness", SpeedupField: "speedup", RewardField: "reward"}

func (g Gate) withDefaults() Gate {
	d := defaultGate
	if g.CategoryKey != "" {
		d.CategoryKey = g.CategoryKey
	}
	if g.CorrectnessField != "" {
		d.CorrectnessField = g.CorrectnessField
	}
	if g.SpeedupField != "" {
		d.SpeedupField = g.SpeedupField
	}
	if g.RewardField != "" {
		d.RewardField = g.RewardField
	}
	return d
}

// Score applies the gate. reward is reward.json, or {RewardField: x} built
// from reward.txt.
func (g Gate) Score(category string, reward map[string]any) (float64, error) {
	g = g.withDefaults()
	switch strings.ToLower(category) {
	case "implementation":
		return field(reward, g.CorrectnessField)
	case "performance":
		c, err := field(reward, g.CorrectnessField)
		if err != nil {
			return 0, err
		}
		if c < 1 {
			return 0.5 * c, nil
		}
		s, err := field(reward, g.SpeedupField)
		if err != nil {
			return 0, err
		}
		return 0.5 + 0.5*s, nil
	case "research":
		return field(reward, g.RewardField)
	}
	return 0, fmt.Errorf("unknown FrontierSWE category %q (want implementation, performance or research)", category)
}

// field reads a number at a dotted path.
func field(m map[string]any, path string) (float64, error) {
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			return 0, fmt.Errorf("reward field %q: %q is not an object", path, k)
		}
		if cur, ok = obj[k]; !ok {
			return 0, fmt.Errorf("reward field %q missing", path)
		}
	}
	switch v := cur.(type) {
	case float64:
		return v, nil
	case bool:
		if v {
			return 1, nil
		}
		return 0, nil
	}
	return 0, fmt.Errorf("reward field %q is %T, not a number", path, cur)
}
