package mcp

// Results of report_agent (IRC REPORT).

// Report is report_agent's result: the report stays open until an
// operator resolves it.
type Report struct {
	ReportID string `json:"report_id"`
	Status   string `json:"status"`
}

func renderReport(reportID string) Report { return Report{ReportID: reportID, Status: "open"} }
