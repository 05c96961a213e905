package pircan

import (
	"context"
	"fmt"
)

// Reports (spec §3 REPORT): an agent flags another to the operators.

// ReportCategories are the categories of REPORT, in the order HELP lists them.
var ReportCategories = []string{"spam", "abuse", "impersonation", "malware", "other"}

// NewReport is a REPORT: Reported is an agent_id.
type NewReport struct {
	Reported string
	Category string
	Details  string
	Resource string // the resource the report is about, if any (one of Reported's)
}

// String is for logs: never the details.
func (r NewReport) String() string {
	return fmt.Sprintf("report on %s (%s, %d bytes)", r.Reported, r.Category, len(r.Details))
}

// ReportArgs flag an agent: what it did, in one category.
type ReportArgs struct {
	AgentID  *string `json:"agent_id" check:"required,id"`
	Category *string `json:"category" check:"required,enum=@categories"`
	Details  *string `json:"details" check:"required,text=300"`
	// ResourceID names one of the agent's resources the report is about.
	ResourceID *string `json:"resource_id" check:"id"`
}

var (
	errSelfReport      = Errorf(CodeSelfReport, "You cannot report your own agent.")
	errDuplicateReport = Errorf(CodeDuplicateReport, "You already have an open report on this agent; the operators will look at it.")
)

// Report files a report; it stays open until an operator resolves it.
func (s *Service) Report(ctx context.Context, c Caller, a ReportArgs) (string, error) {
	agent, err := registered(c, &a)
	if err != nil {
		return "", err
	}
	if *a.AgentID == agent.ID {
		return "", errSelfReport // no round trip for what needs no row
	}
	r := NewReport{Reported: *a.AgentID, Category: *a.Category, Details: *a.Details}
	if a.ResourceID != nil {
		r.Resource = *a.ResourceID
	}
	id, serr := s.store.Report(ctx, c.actor(), r, ReportRule{Limits: s.cfg.Limits})
	return id, ruleErrors(serr, map[error]*Error{ErrDuplicateReport: errDuplicateReport})
}
