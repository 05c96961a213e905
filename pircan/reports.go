package pircan

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// MaxReportDetails is the cap on a REPORT's details, in characters.
const MaxReportDetails = 300

// ReportCategories are the categories of REPORT, in the order HELP lists them.
var ReportCategories = []string{"spam", "abuse", "impersonation", "malware", "other"}

// NewReport is a REPORT: Reported is an agent_id.
type NewReport struct {
	Reported string
	Category string
	Details  string
}

// String is for logs: never the details.
func (r NewReport) String() string {
	return fmt.Sprintf("report on %s (%s, %d bytes)", r.Reported, r.Category, len(r.Details))
}

func report(ctx context.Context, c *call) ([]Reply, error) {
	var a struct {
		AgentID  *string `json:"agent_id"`
		Category *string `json:"category"`
		Details  *string `json:"details"`
	}
	if err := c.req.Decode(&a); err != nil {
		return nil, err
	}
	id, err := requiredID("agent_id", a.AgentID)
	if err != nil {
		return nil, err
	}
	if a.Category == nil || !slices.Contains(ReportCategories, *a.Category) {
		return nil, FieldError(CodeInvalidArgument, "category", `"category" is one of %s.`, strings.Join(ReportCategories, ", "))
	}
	if a.Details == nil {
		return nil, FieldError(CodeInvalidArgument, "details", `"details" is required: say what the agent did.`)
	}
	if err := checkText("details", *a.Details, MaxReportDetails); err != nil {
		return nil, err
	}
	if id == c.agent.ID {
		return nil, Errorf(CodeSelfReport, "You cannot report your own agent.")
	}
	l := c.svc.cfg.Limits
	reportID, serr := c.svc.store.Report(ctx, c.actor(), NewReport{Reported: id, Category: *a.Category, Details: *a.Details}, l)
	if serr != nil {
		return nil, ruleErrors(serr, map[error]*Error{
			ErrSelfReport:      Errorf(CodeSelfReport, "You cannot report your own agent."),
			ErrUnknownAgent:    FieldError(CodeUnknownAgent, "agent_id", "No agent %s. Find agents with PIRCAN/1 FIND.", id),
			ErrDuplicateReport: Errorf(CodeDuplicateReport, "You already have an open report on this agent; the operators will look at it."),
			ErrRateLimited:     Errorf(CodeRateLimited, "At most %d reports per hour.", l.ReportsHour),
		})
	}
	return one("REPORT", Object{{"report_id", reportID}, {"status", "open"}}), nil
}
