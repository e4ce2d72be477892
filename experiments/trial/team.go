package trial

import (
	"math/big"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/experiments/served"
	"github.com/hoh-research/hoh/runrecord"
)

// RoleAgent is the agent one role of a role team runs (docs/roles.md): its
// CLI, the environment in which that CLI reaches its own provider (its
// placeholder credential, no other role's), the relay in between and its
// model's price. Every role's relay logs to the trial's one ServedLog, each
// request under its attempt, so the accounting is the same as one agent's.
type RoleAgent struct {
	Harness harness.Harness
	// Env is passed to the role's invocations instead of Env.Env.
	Env   []string
	Relay *served.Relay
	// Price is the role's model's price; nil leaves its cost unknown.
	Price *runrecord.Price
	// Member names the agent in the summary's team.
	Member runrecord.TeamMember
}

// ForRole is what an invocation of role runs with: e, with the role's own
// agent from Team when it has one. Secrets stay every role's: what one
// role's CLI leaves is scrubbed of every key and placeholder.
func (e Env) ForRole(role runrecord.Role) Env {
	a, ok := e.Team[role]
	if !ok {
		return e
	}
	e.Harness, e.Env, e.Relay, e.Price = a.Harness, a.Env, a.Relay, a.Price
	e.Team = nil
	return e
}

// team is the summary's team: who played each role, nil without a Team.
func (e Env) team() runrecord.Team {
	if len(e.Team) == 0 {
		return nil
	}
	out := runrecord.Team{}
	for role, a := range e.Team {
		out[role] = a.Member
	}
	return out
}

// cost prices invocations, each with its role's price (Env.Price without
// a team); nil when a price is missing.
func (e Env) cost(invs []runrecord.Invocation) *big.Rat {
	if len(e.Team) == 0 {
		if e.Price == nil {
			return nil
		}
		var u runrecord.Usage
		for _, inv := range invs {
			u = u.Add(inv.Usage)
		}
		return e.Price.Cost(u)
	}
	sum := new(big.Rat)
	for _, inv := range invs {
		p := e.ForRole(inv.Role).Price
		if p == nil {
			return nil
		}
		sum.Add(sum, p.Cost(inv.Usage))
	}
	return sum
}
