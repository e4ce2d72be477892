package runrecord

// Role is the HoH role an invocation plays.
type Role string

// Role names used in the records (stages.jsonl, usage.jsonl, the stage
// folders) and by every package that names a role. They are untyped so a
// record's string field, a Role and a prompt kind all take them as they are.
const (
	RolePlanner   = "planner"
	RoleDeveloper = "developer"
	RoleQA        = "qa"
)
