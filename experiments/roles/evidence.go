package roles

import (
	"fmt"
	"strings"

	"github.com/hoh-research/hoh/runrecord"
)

// Normalise turns a QA report into E_t deterministically:
//   - a "verified" claim without an execution record carrying an observation
//     is refused and becomes a gap;
//   - so is one the QA Tester's tool log does not back (executed: the
//     commands its CLI reported running and what it recorded them printing):
//     it needs a record with a command (or a captured screenshot/replay
//     file) and an observation, every command its records name must
//     correspond to an executed one, and each observation must be found in
//     that command's recorded output (toollog.go);
//   - a claim id that appears as both verified and gap is a gap (the
//     conservative reading), so the two sets stay disjoint;
//   - repeated claim ids within a set are merged;
//   - a record whose status is not "verified" is not in the verified set,
//     whatever list it was reported in;
//   - qa_status "pass" stands only without gaps (partial or fail otherwise);
//   - the handoff is derived from the records: verified claims become
//     preservation constraints, gaps become update targets (their
//     recommended update when given) and validation requirements.
func Normalise(r runrecord.QAReport, digest string, executed []Execution) runrecord.Evidence {
	e := runrecord.Evidence{Iteration: r.Iteration, CandidateDigest: digest, QAStatus: r.QAStatus}
	g := &gapSet{ids: map[string]bool{}}
	for _, c := range r.GapRecords {
		g.add(c)
	}
	admitVerified(&e, r.VerifiedRecords, executed, g)
	// A claim demoted after being accepted as verified must leave the verified set.
	kept := e.Verified[:0]
	for _, c := range e.Verified {
		if !g.ids[c.ClaimID] {
			kept = append(kept, c)
		}
	}
	e.Verified = kept
	e.Gaps = g.claims
	// "pass" only without gaps; a QA's partial or fail stands.
	if e.QAStatus == "pass" && len(e.Gaps) > 0 {
		status := "partial"
		if len(e.Verified) == 0 {
			status = "fail"
		}
		e.Notes = append(e.Notes, fmt.Sprintf("qa_status \"pass\" reported with %d gaps: recorded as %q", len(e.Gaps), status))
		e.QAStatus = status
	}
	deriveHandoff(&e)
	return e
}

// gapSet is the gaps so far, one per claim id in order of first report.
type gapSet struct {
	ids    map[string]bool
	claims []runrecord.Claim
}

// add records c as a gap, merging its execution records into the gap of
// the same claim id if there is one.
func (g *gapSet) add(c runrecord.Claim) {
	c.Status = "gap"
	if g.ids[c.ClaimID] {
		for i := range g.claims {
			if g.claims[i].ClaimID == c.ClaimID {
				g.claims[i].ExecutionRecords = append(g.claims[i].ExecutionRecords, c.ExecutionRecords...)
			}
		}
		return
	}
	g.ids[c.ClaimID] = true
	g.claims = append(g.claims, c)
}

// admitVerified accepts the verified records the tool log backs (merged
// by claim id) and records the others as gaps, each with a note saying why.
func admitVerified(e *runrecord.Evidence, records []runrecord.Claim, executed []Execution, g *gapSet) {
	verIDs := map[string]int{}
	for _, c := range records {
		switch {
		case g.ids[c.ClaimID]:
			e.Notes = append(e.Notes, fmt.Sprintf("claim %q was reported both verified and gap: kept as gap", c.ClaimID))
		case c.Status != "" && c.Status != "verified":
			e.Notes = append(e.Notes, fmt.Sprintf("claim %q is in verified_records with status %q: recorded as gap", c.ClaimID, c.Status))
			g.add(c)
		case !hasObservation(c):
			e.Notes = append(e.Notes, fmt.Sprintf("claim %q reported verified without an execution record: recorded as gap", c.ClaimID))
			if c.RecommendedUpdate == "" {
				c.RecommendedUpdate = "Provide execution evidence for: " + c.Claim
			}
			g.add(c)
		case unbacked(c, executed) != "":
			e.Notes = append(e.Notes, fmt.Sprintf("claim %q reported verified, but %s: recorded as gap", c.ClaimID, unbacked(c, executed)))
			if c.RecommendedUpdate == "" {
				c.RecommendedUpdate = "Run a command that demonstrates: " + c.Claim
			}
			g.add(c)
		default:
			c.Status = "verified"
			if i, dup := verIDs[c.ClaimID]; dup {
				e.Verified[i].ExecutionRecords = append(e.Verified[i].ExecutionRecords, c.ExecutionRecords...)
				continue
			}
			verIDs[c.ClaimID] = len(e.Verified)
			e.Verified = append(e.Verified, c)
		}
	}
}

// deriveHandoff derives the handoff from the records: verified claims
// become preservation constraints, gaps update targets (their recommended
// update when given) and validation requirements.
func deriveHandoff(e *runrecord.Evidence) {
	for _, c := range e.Verified {
		e.Handoff.PreservationConstraints = append(e.Handoff.PreservationConstraints, "Preserve verified behaviour: "+c.Claim)
	}
	for _, c := range e.Gaps {
		target := c.RecommendedUpdate
		if strings.TrimSpace(target) == "" {
			target = "Address gap: " + c.Claim
		}
		e.Handoff.UpdateTargets = append(e.Handoff.UpdateTargets, target)
		e.Handoff.ValidationRequirements = append(e.Handoff.ValidationRequirements, "Demonstrate with an execution record: "+c.Claim)
	}
}

// unbacked says why the tool log does not back a claim ("" when it does).
func unbacked(c runrecord.Claim, executed []Execution) string {
	backed := false
	for _, r := range c.ExecutionRecords {
		if strings.TrimSpace(r.Command) == "" {
			// A frame or recording QA captured (the trial checks that its
			// file is in the QA Tester's view, trial.checkMedia) backs a
			// claim; any other record without a command does not.
			if (r.Type == "screenshot" || r.Type == "replay") && r.Path != "" && strings.TrimSpace(r.Observation) != "" {
				backed = true
			}
			continue
		}
		runs := ran(r.Command, executed)
		if len(runs) == 0 {
			if len(executed) == 0 {
				return fmt.Sprintf("the QA Tester's tool log shows no command at all (its record names %q)", r.Command)
			}
			return fmt.Sprintf("its record's command %q is not among the %d commands the QA Tester's tool log shows", r.Command, len(executed))
		}
		if strings.TrimSpace(r.Observation) == "" {
			continue
		}
		if !observed(r.Observation, runs) {
			return fmt.Sprintf("its observation %q for %q is not in the output its CLI recorded for that command (%s)", r.Observation, r.Command, outputExcerpt(runs))
		}
		backed = true
	}
	if !backed {
		return "no execution record names a command (or a captured screenshot or replay) with an observation"
	}
	return ""
}

func hasObservation(c runrecord.Claim) bool {
	for _, r := range c.ExecutionRecords {
		if strings.TrimSpace(r.Observation) != "" {
			return true
		}
	}
	return false
}

// outputExcerpt quotes the start of the first recorded output of runs, for
// a note.
func outputExcerpt(runs []Execution) string {
	for _, r := range runs {
		if r.Output != nil {
			out := collapse(*r.Output)
			if len(out) > 200 {
				out = out[:200] + "..."
			}
			return fmt.Sprintf("it printed %q", out)
		}
	}
	return "no output recorded"
}
