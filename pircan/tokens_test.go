package pircan_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/pircan"
)

// Bearer tokens in the core: Authenticate refuses every token that is not
// in force with the one ErrUnauthorized, and stands a valid one for its
// account, with the agent registered for it.

func wantUnauthorized(t *testing.T, what string, c pircan.Caller, err error) {
	t.Helper()
	if !errors.Is(err, pircan.ErrUnauthorized) || c.Account != "" {
		t.Errorf("%s: caller %+v, error %v; want ErrUnauthorized", what, c, err)
	}
}

func TestTokenAuthenticate(t *testing.T) {
	svc := newService(t)
	ctx := t.Context()
	account := unique("tok")
	issued, err := svc.IssueToken(ctx, pircan.OperatorCaller("operator:test"), pircan.IssueTokenArgs{Account: ptr(account), Label: ptr("ci")})
	if err != nil || !strings.HasPrefix(issued.Secret, pircan.TokenPrefix) || issued.Account != account ||
		!issued.ExpiresAt.IsZero() {
		t.Fatalf("issue: %+v, %v", issued, err)
	}

	// Before HELLO the token stands for its account, with no agent yet.
	c, err := svc.Authenticate(ctx, pircan.FaceMCP, issued.Secret)
	if err != nil || c.Account != account || c.Face != pircan.FaceMCP || c.Agent != nil || c.Nick != "" {
		t.Fatalf("authenticate before HELLO: %+v, %v", c, err)
	}
	if _, err := svc.Hello(ctx, c, pircan.HelloArgs{}); err != nil {
		t.Fatal(err)
	}
	c, err = svc.Authenticate(ctx, pircan.FaceMCP, issued.Secret)
	if err != nil || c.Account != account || c.Agent == nil || c.Agent.Account != account {
		t.Fatalf("authenticate after HELLO: %+v, %v", c, err)
	}

	c, err = svc.Authenticate(ctx, pircan.FaceMCP, pircan.TokenPrefix+"never-issued")
	wantUnauthorized(t, "unknown token", c, err)
	for _, garbage := range []string{"", "Bearer " + issued.Secret, strings.TrimPrefix(issued.Secret, pircan.TokenPrefix),
		issued.Secret + strings.Repeat("x", 200)} {
		c, err = svc.Authenticate(ctx, pircan.FaceMCP, garbage)
		wantUnauthorized(t, "garbage "+garbage, c, err)
	}

	if _, err := svc.RevokeToken(ctx, pircan.OperatorCaller("operator:test"), pircan.TokenArgs{TokenID: ptr(issued.ID)}); err != nil {
		t.Fatal(err)
	}
	c, err = svc.Authenticate(ctx, pircan.FaceMCP, issued.Secret)
	wantUnauthorized(t, "revoked token", c, err)
}

func TestTokenExpires(t *testing.T) {
	now := time.Now()
	at := func(d time.Duration) *pircan.Service {
		return pircan.NewService(shared, pircan.Config{Limits: sharedLimits(), Now: func() time.Time { return now.Add(d) }},
			zerolog.Nop())
	}
	ctx := t.Context()
	issued, err := at(0).IssueToken(ctx, pircan.OperatorCaller("operator:test"), pircan.IssueTokenArgs{Account: ptr(unique("exp")), ExpiresIn: ptr(time.Hour)})
	if err != nil || !issued.ExpiresAt.Equal(now.Add(time.Hour).Truncate(time.Microsecond)) {
		t.Fatalf("issue: %+v, %v", issued, err)
	}
	if _, err := at(59*time.Minute).Authenticate(ctx, pircan.FaceMCP, issued.Secret); err != nil {
		t.Fatalf("a minute before expiry: %v", err)
	}
	c, err := at(time.Hour).Authenticate(ctx, pircan.FaceMCP, issued.Secret)
	wantUnauthorized(t, "expired token", c, err)
}

func TestTokenIssueAndRevokeRules(t *testing.T) {
	svc := newService(t)
	ctx := t.Context()
	if _, err := svc.IssueToken(ctx, pircan.OperatorCaller("operator:test"), pircan.IssueTokenArgs{Account: ptr("")}); err == nil {
		t.Error("issued a token for no account")
	}
	if _, err := svc.IssueToken(ctx, pircan.OperatorCaller("operator:test"), pircan.IssueTokenArgs{Account: ptr(unique("neg")), ExpiresIn: ptr(-time.Hour)}); err == nil {
		t.Error("issued a token with a negative lifetime")
	}
	_, err := svc.RevokeToken(ctx, pircan.OperatorCaller("operator:test"), pircan.TokenArgs{TokenID: ptr("0b5e4f3a-9c1d-4e2f-8a7b-6c5d4e3f2a1b")})
	var perr *pircan.Error
	if !errors.As(err, &perr) || perr.Code != pircan.CodeNotFound {
		t.Errorf("revoke unknown: %v, want not_found", err)
	}
}
