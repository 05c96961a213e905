package pircan_test

import (
	"strings"
	"testing"

	"github.com/creatimus/pircan/pircan"
)

// Ids are canonical (lower case) once they are read: an id in upper case
// names the same agent, so one's own id refuses as one's own, and requests
// to others are counted by the hourly limits as any other.
func TestUpperCaseIDs(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l := sharedLimits()
	l.ContactsHour = 2
	svc := newServiceLimits(t, l)
	me := agent(t, svc, pircan.FaceMCP)
	upper := strings.ToUpper(me.Agent.ID)

	_, err := svc.Contact(ctx, me, pircan.ContactArgs{To: sp(upper), Purpose: sp("me")})
	wantErr(t, "CONTACT of one's own id in upper case", err, pircan.CodeSelfContact, "")
	_, err = svc.Report(ctx, me, pircan.ReportArgs{AgentID: sp(upper), Category: sp("spam"), Details: sp("me")})
	wantErr(t, "REPORT of one's own id in upper case", err, pircan.CodeSelfReport, "")
	_, err = svc.SendTask(ctx, me, pircan.SendTaskArgs{To: sp(upper), Text: sp("x")})
	wantErr(t, "a task to one's own id in upper case", err, pircan.CodeSelfContact, "")

	for i := range l.ContactsHour {
		other := agent(t, svc, pircan.FaceIRC)
		r, err := svc.Contact(ctx, me, pircan.ContactArgs{To: sp(strings.ToUpper(other.Agent.ID)), Purpose: sp("hi")})
		must(t, err)
		if r.RequestID == "" || r.RequestID != strings.ToLower(r.RequestID) {
			t.Fatalf("contact %d: request id %q", i+1, r.RequestID)
		}
		// The target's answer by the id in upper case finds it.
		if _, err := svc.Decline(ctx, other, pircan.RequestArgs{RequestID: sp(strings.ToUpper(r.RequestID))}); err != nil {
			t.Fatalf("DECLINE by the request id in upper case: %v", err)
		}
	}
	other := agent(t, svc, pircan.FaceIRC)
	_, err = svc.Contact(ctx, me, pircan.ContactArgs{To: sp(strings.ToUpper(other.Agent.ID)), Purpose: sp("hi")})
	wantErr(t, "a contact past the hourly limit", err, pircan.CodeRateLimited, "")
}
func TestCanonicalID(t *testing.T) {
	for in, want := range map[string]string{
		"0F8FAD5B-D9CB-469F-A165-70867728950E": "0f8fad5b-d9cb-469f-a165-70867728950e",
		"0f8fad5b-d9cb-469f-a165-70867728950e": "0f8fad5b-d9cb-469f-a165-70867728950e",
		"not an id":                            "not an id",
		"İ":                                    "İ",
	} {
		if got := pircan.CanonicalID(in); got != want {
			t.Errorf("CanonicalID(%q) = %q, want %q", in, got, want)
		}
	}
}
