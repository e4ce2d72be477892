package runrecord

// Role names used in the records (stages.jsonl, usage.jsonl, the stage
// folders) and by every package that names a role.
const (
	RolePlanner   = "planner"
	RoleDeveloper = "developer"
	RoleQA        = "qa"
)
