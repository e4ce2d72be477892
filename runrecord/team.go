package runrecord

import "strings"

// TeamMember is the agent that played one role of a trial: the name a
// config gave it (a factorial design's agent, "" for an entry's own), the
// CLI and its version, and the provider's API and model.
type TeamMember struct {
	Agent   string `json:"agent,omitempty"`
	Harness string `json:"harness"`
	Version string `json:"harness_version,omitempty"`
	API     string `json:"api,omitempty"`
	Model   string `json:"model,omitempty"`
}

// Team maps a role (RolePlanner, RoleDeveloper, RoleQA) to who played it.
type Team map[Role]TeamMember

// String spells the team out in the roles' order: each role's agent (a
// design's name when it has one), CLI and version, API and model.
func (t Team) String() string {
	var parts []string
	for _, role := range Roles {
		m, ok := t[role]
		if !ok {
			continue
		}
		who := strings.TrimSpace(m.Harness + " " + m.Version)
		if m.Agent != "" {
			who = m.Agent + ": " + who
		}
		part := role.Display() + " " + who
		if on := strings.TrimSpace(m.API + " " + m.Model); on != "" {
			part += " (" + on + ")"
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, " · ")
}
