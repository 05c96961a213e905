package irc

// Rendering of REPORT.

func renderReport(_ *call, reportID string) []Reply {
	return one("REPORT", Object{{"report_id", reportID}, {"status", "open"}})
}
