package pircan_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/creatimus/pircan/pircan"
)

// refuseBad is a URLPolicy that refuses any URL naming "bad": the real
// one (pircan/webhook) is tested there.
type refuseBad struct{}

func (refuseBad) CheckURL(_ context.Context, raw string) error {
	if strings.Contains(raw, "bad") {
		return pircan.FieldError(pircan.CodeInvalidArgument, "url", "refused by the test policy")
	}
	return nil
}

func webhookService(t *testing.T, p pircan.URLPolicy) *pircan.Service {
	svc := pircan.NewService(shared, pircan.Config{Limits: sharedLimits(), WebhookURLs: p}, zerolog.Nop())
	t.Cleanup(svc.WaitReads)
	return svc
}

func TestWebhookRegisterListDelete(t *testing.T) {
	svc := webhookService(t, refuseBad{})
	ctx := t.Context()
	me, other := agent(t, svc, pircan.FaceMCP), agent(t, svc, pircan.FaceIRC)

	created, err := svc.RegisterWebhook(ctx, me, pircan.RegisterWebhookArgs{URL: sp("https://hooks.example/1")})
	must(t, err)
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(created.Secret) || created.ID == "" || created.AgentID != me.Agent.ID {
		t.Fatalf("created: %+v", created)
	}
	before := auditCount(t, me.Account)
	_, err = svc.RegisterWebhook(ctx, me, pircan.RegisterWebhookArgs{URL: sp("https://bad.example/")})
	wantErr(t, "a URL the policy refuses", err, pircan.CodeInvalidArgument, "url")
	_, err = svc.RegisterWebhook(ctx, me, pircan.RegisterWebhookArgs{})
	wantErr(t, "no url", err, pircan.CodeInvalidArgument, "url")
	if auditCount(t, me.Account) != before {
		t.Errorf("a refused registration changed something")
	}
	for i := 2; i <= pircan.MaxWebhooks; i++ {
		_, err := svc.RegisterWebhook(ctx, me, pircan.RegisterWebhookArgs{URL: sp("https://hooks.example/" + string(rune('0'+i)))})
		must(t, err)
	}
	_, err = svc.RegisterWebhook(ctx, me, pircan.RegisterWebhookArgs{URL: sp("https://hooks.example/6")})
	wantErr(t, "one webhook beyond the limit", err, pircan.CodeInvalidArgument, "url")

	list, err := svc.Webhooks(ctx, me, pircan.NoArgs{})
	must(t, err)
	if len(list) != pircan.MaxWebhooks || list[0].ID != created.ID || list[0].URL != "https://hooks.example/1" {
		t.Fatalf("list: %+v", list)
	}
	if theirs, err := svc.Webhooks(ctx, other, pircan.NoArgs{}); err != nil || len(theirs) != 0 {
		t.Fatalf("another agent sees %+v %v", theirs, err)
	}

	_, err = svc.DeleteWebhook(ctx, other, pircan.WebhookArgs{WebhookID: sp(created.ID)})
	wantErr(t, "another agent's webhook", err, pircan.CodeNotFound, "webhook_id")
	_, err = svc.DeleteWebhook(ctx, me, pircan.WebhookArgs{WebhookID: sp(noID)})
	wantErr(t, "no such webhook", err, pircan.CodeNotFound, "webhook_id")
	id, err := svc.DeleteWebhook(ctx, me, pircan.WebhookArgs{WebhookID: sp(created.ID)})
	if err != nil || id != created.ID {
		t.Fatalf("delete: %q %v", id, err)
	}
	list, err = svc.Webhooks(ctx, me, pircan.NoArgs{})
	must(t, err)
	if len(list) != pircan.MaxWebhooks-1 {
		t.Errorf("after a delete: %d webhooks", len(list))
	}
	// A place is free again.
	_, err = svc.RegisterWebhook(ctx, me, pircan.RegisterWebhookArgs{URL: sp("https://hooks.example/again")})
	must(t, err)
}

func TestWebhookNeedsRegisteredCallerAndPolicy(t *testing.T) {
	svc := webhookService(t, refuseBad{})
	ctx := t.Context()
	u := unregistered(t, svc)
	_, err := svc.RegisterWebhook(ctx, u, pircan.RegisterWebhookArgs{URL: sp("https://hooks.example/")})
	wantErr(t, "register unregistered", err, pircan.CodeNotRegistered, "")
	_, err = svc.Webhooks(ctx, u, pircan.NoArgs{})
	wantErr(t, "list unregistered", err, pircan.CodeNotRegistered, "")
	_, err = svc.DeleteWebhook(ctx, u, pircan.WebhookArgs{WebhookID: sp(noID)})
	wantErr(t, "delete unregistered", err, pircan.CodeNotRegistered, "")

	off := webhookService(t, nil)
	_, err = off.RegisterWebhook(ctx, agent(t, off, pircan.FaceIRC), pircan.RegisterWebhookArgs{URL: sp("https://hooks.example/")})
	wantErr(t, "webhooks not enabled", err, pircan.CodeInvalidArgument, "url")
}
