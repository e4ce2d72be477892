package runrecord

// The role contracts as a trial writes them to disk: the Planner's D_t
// (plan.json, plan.md), the Developer's and QA Tester's report.json and the
// normalised evidence bundle E_t (evidence.json). experiments/roles parses
// and normalises them; the viewer reads them back through these types.

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Plan is the development document D_t.
type Plan struct {
	Objective  string       `json:"objective"`
	Tasks      []PlanTask   `json:"tasks"`
	Preserve   []string     `json:"preserve"`
	Acceptance []Acceptance `json:"acceptance"`
}

type PlanTask struct {
	ID          string `json:"id"`
	Description string `json:"description"`
}

type Acceptance struct {
	ID          string `json:"id"`
	Requirement string `json:"requirement"`
	Observation string `json:"observation"`
}

// DevReport is what the Developer (and Vanilla) returns besides the artifact.
type DevReport struct {
	Summary   string     `json:"summary"`
	SelfTests []SelfTest `json:"self_tests"`
}

type SelfTest struct {
	Command string `json:"command"`
	Outcome string `json:"outcome"`
}

// QAReport is the QA Tester's claim-evidence report (paper Listing 1).
type QAReport struct {
	Iteration       int      `json:"iteration"`
	QAStatus        string   `json:"qa_status"`
	VerifiedRecords []Claim  `json:"verified_records"`
	GapRecords      []Claim  `json:"gap_records"`
	PlannerHandoff  *Handoff `json:"planner_handoff,omitempty"`
}

type Claim struct {
	ClaimID           string            `json:"claim_id"`
	Claim             string            `json:"claim"`
	ExecutionRecords  []ExecutionRecord `json:"execution_records"`
	Status            string            `json:"status"`
	PlayerImpact      string            `json:"player_impact,omitempty"`
	RecommendedUpdate string            `json:"recommended_update,omitempty"`
}

type ExecutionRecord struct {
	Type        string `json:"type"`
	Command     string `json:"command,omitempty"`
	Path        string `json:"path,omitempty"`
	Observation string `json:"observation"`
}

type Handoff struct {
	PreservationConstraints []string `json:"preservation_constraints"`
	UpdateTargets           []string `json:"update_targets"`
	ValidationRequirements  []string `json:"validation_requirements"`
}

// Markdown writes D_t as plan.md for the Developer and QA Tester.
func (p Plan) Markdown(iteration int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Development document D_%d\n\n## Objective\n%s\n\n## Tasks\n", iteration, p.Objective)
	for _, t := range p.Tasks {
		fmt.Fprintf(&b, "- %s: %s\n", t.ID, t.Description)
	}
	b.WriteString("\n## Functionality to preserve\n")
	if len(p.Preserve) == 0 {
		b.WriteString("- (none yet)\n")
	}
	for _, s := range p.Preserve {
		fmt.Fprintf(&b, "- %s\n", s)
	}
	b.WriteString("\n## Acceptance requirements\n")
	for _, a := range p.Acceptance {
		fmt.Fprintf(&b, "- %s: %s", a.ID, a.Requirement)
		if a.Observation != "" {
			fmt.Fprintf(&b, " (observe: %s)", a.Observation)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Evidence is the normalised evidence bundle E_t (paper Eq. 4-6; built by
// roles.Normalise): a disjoint partition of claims into verified and gap
// records, bound to one candidate digest, plus the planner handoff derived
// from them.
type Evidence struct {
	Iteration       int      `json:"iteration"`
	CandidateDigest string   `json:"candidate_digest"`
	QAStatus        string   `json:"qa_status"`
	Verified        []Claim  `json:"verified_records"`
	Gaps            []Claim  `json:"gap_records"`
	Handoff         Handoff  `json:"planner_handoff"`
	Notes           []string `json:"normalisation_notes,omitempty"`
	// Media is the manifest of the screenshots and recordings the QA Tester
	// left (paper A.4): where each is kept and what its records say it shows.
	Media []MediaItem `json:"media,omitempty"`
}

// MediaItem is one frame or recording in an evidence bundle's manifest.
type MediaItem struct {
	// Path is where the file is kept, relative to the trial directory;
	// ViewPath is where the QA Tester saw it (e.g. /workspace/frame.png).
	Path     string `json:"path"`
	ViewPath string `json:"view_path,omitempty"`
	Bytes    int64  `json:"bytes"`
	SHA256   string `json:"sha256"`
	// Shows are the observations of the execution records citing the file,
	// with the claims they back; none: no record said what it shows.
	Shows  []string `json:"shows,omitempty"`
	Claims []string `json:"claims,omitempty"`
}

// Summary is the one-line categorised description used in prompt indexes.
func (e Evidence) Summary() string {
	return fmt.Sprintf("QA status %s for candidate %s: %d verified claims, %d gaps", e.QAStatus, short(e.CandidateDigest), len(e.Verified), len(e.Gaps))
}

func short(d string) string {
	if len(d) > 19 {
		return d[:19]
	}
	return d
}

// MarshalJSON writes empty lists as [] rather than null, as report.json
// does, so readers of E_t need not tell "none" from "missing".
func (e Evidence) MarshalJSON() ([]byte, error) {
	type plain Evidence
	out := plain(e)
	out.Verified = claimsOrEmpty(out.Verified)
	out.Gaps = claimsOrEmpty(out.Gaps)
	h := &out.Handoff
	for _, l := range []*[]string{&h.PreservationConstraints, &h.UpdateTargets, &h.ValidationRequirements} {
		if *l == nil {
			*l = []string{}
		}
	}
	return json.Marshal(out)
}

func claimsOrEmpty(cs []Claim) []Claim {
	out := make([]Claim, 0, len(cs))
	for _, c := range cs {
		if c.ExecutionRecords == nil {
			c.ExecutionRecords = []ExecutionRecord{}
		}
		out = append(out, c)
	}
	return out
}
