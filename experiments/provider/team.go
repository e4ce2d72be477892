package provider

import (
	"fmt"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/runrecord"
)

// Team is a role team routed for one trial or project run: one Route per
// distinct agent (its relay and placeholder credential), every relay
// logging to one log, and each role's CLI built for its route, so that a
// role's requests reach its own provider only. The runner and project
// mode both route a team here; prices and log places stay theirs.
type Team struct {
	Seats map[runrecord.Role]Seat
	// Secrets are every role's key and placeholder: what one role's CLI
	// leaves is scrubbed of them all.
	Secrets []string
	// ServedLog is the relays' one log, "" when no agent is served.
	ServedLog string
	routes    []*Route
}

// Seat is what one role of a team runs with.
type Seat struct {
	Agent *Agent
	Route *Route
	// Harness is the role's CLI built for Provider.
	Harness harness.Harness
	// Provider is the role's provider as its CLI reaches it (the relay).
	Provider harness.Provider
	Member   runrecord.TeamMember
}

// RelayError is a role's relay that could not start: an infrastructure
// fault, apart from a CLI that cannot be built for its route.
type RelayError struct {
	Role runrecord.Role
	Err  error
}

func (e *RelayError) Error() string {
	return fmt.Sprintf("hoh's relay of the %s: %v", e.Role.Display(), e.Err)
}

func (e *RelayError) Unwrap() error { return e.Err }

// RouteTeam routes agents (one per role; roles may share an agent, which
// then shares its route) with env and secrets (the caller's) extended by
// each route's credential, every relay logging to log.
func RouteTeam(agents map[runrecord.Role]*Agent, log string, env, secrets []string) (*Team, error) {
	t := &Team{Seats: map[runrecord.Role]Seat{}}
	routes := map[*Agent]*Route{}
	for _, role := range runrecord.Roles {
		a := agents[role]
		route, ok := routes[a]
		if !ok {
			var err error
			if route, err = a.Route(log, env, secrets); err != nil {
				t.Close()
				return nil, &RelayError{Role: role, Err: err}
			}
			routes[a] = route
			t.routes = append(t.routes, route)
			t.Secrets = append(t.Secrets, route.Secrets...)
			if route.Relay != nil {
				t.ServedLog = route.ServedLog()
			}
		}
		spec := a.Config.HarnessSpec()
		spec.Provider = route.Provider(spec.Provider)
		h, err := a.HarnessFor(spec)
		if err != nil {
			t.Close()
			return nil, fmt.Errorf("role %s: %w", role, err)
		}
		t.Seats[role] = Seat{Agent: a, Route: route, Harness: h, Provider: spec.Provider,
			Member: runrecord.TeamMember{Agent: a.Config.Name, Harness: h.Name(), Version: h.Version(),
				API: a.Config.Provider.API, Model: a.Config.Provider.Model}}
	}
	return t, nil
}

// Close stops every route's relay.
func (t *Team) Close() {
	for _, r := range t.routes {
		r.Close()
	}
}
