package runrecord

import "fmt"

// Role is the HoH role an invocation plays. The records (stages.jsonl,
// usage.jsonl, the stage folders) name it by its string; this file is the
// only place that spells those strings (roles_test.go checks the tree).
type Role string

// The three HoH roles.
const (
	RolePlanner   Role = "planner"
	RoleDeveloper Role = "developer"
	RoleQA        Role = "qa"
)

// Roles are the roles in the order an iteration runs them.
var Roles = []Role{RolePlanner, RoleDeveloper, RoleQA}

// Valid says whether r is one of Roles.
func (r Role) Valid() bool {
	return r == RolePlanner || r == RoleDeveloper || r == RoleQA
}

// Display is the name a reader sees ("QA Tester"); an unknown role is shown
// as it is spelt.
func (r Role) Display() string {
	switch r {
	case RolePlanner:
		return "Planner"
	case RoleDeveloper:
		return "Developer"
	case RoleQA:
		return "QA Tester"
	}
	return string(r)
}

// Rank is r's place in Roles (-1 for an unknown role): stages of one
// iteration sort by it.
func (r Role) Rank() int {
	for i, x := range Roles {
		if x == r {
			return i
		}
	}
	return -1
}

// MarshalText writes r as the records spell it. The zero Role (no role)
// writes "", so a record that leaves it empty reads back the same.
func (r Role) MarshalText() ([]byte, error) {
	if r != "" && !r.Valid() {
		return nil, fmt.Errorf("unknown role %q (want planner, developer or qa)", string(r))
	}
	return []byte(r), nil
}

// UnmarshalText reads a role as the records spell it and refuses any other
// (the caller's error names the file and line); "" is the zero Role.
func (r *Role) UnmarshalText(b []byte) error {
	x := Role(b)
	if x != "" && !x.Valid() {
		return fmt.Errorf("unknown role %q (want planner, developer or qa)", string(b))
	}
	*r = x
	return nil
}

// RoleLockKey names a role team's own agent of configuration label where
// the run keys agents by name: its lock entries and its provider log
// ("label.planner").
func RoleLockKey(label string, role Role) string { return label + "." + string(role) }
