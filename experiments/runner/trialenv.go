package runner

import (
	"cmp"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/experiments/plan"
	"github.com/hoh-research/hoh/experiments/provider"
	"github.com/hoh-research/hoh/experiments/served"
	"github.com/hoh-research/hoh/experiments/trial"
	"github.com/hoh-research/hoh/runrecord"
)

// trialPolicy is what every attempt of a trial runs with, whatever its
// route and environment (trial.Policy), and a role team's prices, role by
// role.
type trialPolicy struct {
	trial.Policy
	rolePrices map[runrecord.Role]*runrecord.Price
}

// policyOf is t's trialPolicy; logf is silent on a terminal, where the
// progress display shows the trial.
func (r *run) policyOf(t plan.Trial, rt *configRuntime) trialPolicy {
	pol := trialPolicy{Policy: trial.Policy{
		OnRole:          func(it int, role runrecord.Role, attempt int) { r.progress.Role(t, it, role, attempt) },
		Logf:            func(format string, args ...any) {},
		ContractRetries: r.exp.Retries.Contract,
		Timeouts:        trial.Timeouts(r.exp.Timeouts),
		Limits:          r.exp.Limits.Sandbox(),
		RunDir:          r.out,
	}}
	if !r.opts.Terminal {
		pol.Logf = func(format string, args ...any) { r.progress.Logf(t.Dir+": "+format, args...) }
	}
	if p, ok := r.exp.PriceOf(t.Config); ok {
		pol.Price = &p
	}
	if rt.team != nil {
		pol.rolePrices = map[runrecord.Role]*runrecord.Price{}
		for _, role := range runrecord.Roles {
			if p, ok := r.exp.PriceOfRole(t.Config, role); ok {
				pol.rolePrices[role] = &p
			}
		}
	}
	if pol.ContractRetries == 0 {
		pol.ContractRetries = -1 // explicit zero: no contract retries
	}
	return pol
}

// routed is how an attempt's CLIs reach their provider (relay): the
// environment and secrets with the credential, hoh's relay and its log,
// and for a role team every role's route.
type routed struct {
	env, secrets []string
	servedLog    string
	relay        *served.Relay
	team         *provider.Team // nil: one agent
	close        func()
}

// attemptCLIs are the CLIs built for an attempt's environment: the
// Developer's (what Vanilla runs) and, for a role team, every role's.
type attemptCLIs struct {
	developer harness.Harness
	roles     map[runrecord.Role]harness.Harness
}

// trialEnv is what an attempt of u runs with, built in one place: pol,
// the route to the provider, the place the environment opened for the
// attempt gives (environment.Env.Place) and the CLIs built for it.
func trialEnv(pol trialPolicy, u unit, route routed, place trial.Place, clis attemptCLIs) trial.Env {
	pol.Timeouts.Developer = cmp.Or(u.developerTimeout, pol.Timeouts.Developer)
	tr := trial.Route{Env: route.env, Secrets: route.secrets, ServedLog: route.servedLog, Relay: route.relay,
		Team: teamSeats(route.team, clis.roles, pol.rolePrices)}
	return trial.NewEnv(pol.Policy, place, tr, clis.developer, trial.Mode{WithoutScores: u.withoutScores})
}

// teamSeats is what each role of a routed team runs with (nil without a
// team): its CLI, its route and its model's price.
func teamSeats(team *provider.Team, clis map[runrecord.Role]harness.Harness, prices map[runrecord.Role]*runrecord.Price) map[runrecord.Role]trial.RoleAgent {
	if team == nil {
		return nil
	}
	seats := make(map[runrecord.Role]trial.RoleAgent, len(team.Seats))
	for role, seat := range team.Seats {
		seats[role] = trial.RoleAgent{Harness: clis[role], Env: seat.Route.Env, Relay: seat.Route.Relay,
			Member: seat.Member, Price: prices[role]}
	}
	return seats
}
