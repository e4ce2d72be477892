package main

import (
	"strings"
	"testing"

	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/plan"
)

// Shards run at once share the experiment's budget: each gets 1/N of the
// tokens and of the dollars (to the cent, down), and says so.
func TestShardsSplitTheBudget(t *testing.T) {
	exp := &config.Experiment{Budget: config.Budget{Tokens: 1000, USD: "10"}}
	note := splitBudget(exp, plan.Shard{K: 2, N: 3})
	if exp.Budget.Tokens != 333 || exp.Budget.USD != "3.33" {
		t.Errorf("shard 2/3 of 1000 tokens and $10: %d tokens, $%s", exp.Budget.Tokens, exp.Budget.USD)
	}
	if !strings.Contains(note, "333 of 1000 tokens") || !strings.Contains(note, "$3.33 of $10") {
		t.Errorf("note: %q", note)
	}
	for _, sh := range []plan.Shard{{}, {K: 1, N: 1}} {
		exp := &config.Experiment{Budget: config.Budget{Tokens: 1000, USD: "10"}}
		if note := splitBudget(exp, sh); note != "" || exp.Budget.Tokens != 1000 || exp.Budget.USD != "10" {
			t.Errorf("unsharded %v: budget changed to %+v (%q)", sh, exp.Budget, note)
		}
	}
	unlimited := &config.Experiment{}
	if note := splitBudget(unlimited, plan.Shard{K: 1, N: 4}); note != "" || unlimited.Budget.Tokens != 0 || unlimited.Budget.USD != "" {
		t.Errorf("an unlimited budget stays unlimited: %+v %q", unlimited.Budget, note)
	}
}
