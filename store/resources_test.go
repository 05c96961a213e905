package store_test

import (
	"strings"
	"testing"

	"github.com/creatimus/pircan/pircan"
)

// The resource library's limits at the store, under racing publications
// (the faces reach one agent from several connections).

func (h *hs) publish(a pircan.Agent, content string, l pircan.Limits) (pircan.Resource, error) {
	return h.s.AddResource(h.ctx, act(a), pircan.NewResource{Title: "notes", Tags: []string{"Chem"},
		Access: pircan.AccessPublic, MediaType: pircan.DefaultMediaType, Content: content}, l)
}

func TestRacingResourcePublicationsKeepTheLimits(t *testing.T) {
	t.Parallel()
	t.Run("hourly", func(t *testing.T) {
		h := newHS(t)
		a := h.agent("publisher")
		l := pircan.DefaultLimits
		l.ResourcesHour = 5
		ok := race(t, 20, func(int) error { _, err := h.publish(a, "x", l); return err }, pircan.ErrRateLimited)
		if ok != 5 || h.count("SELECT count(*) FROM resources") != 5 {
			t.Errorf("%d of 20 racing publications succeeded, want 5", ok)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		h := newHS(t)
		a := h.agent("publisher")
		l := pircan.DefaultLimits
		l.ResourceBytes = 300
		ok := race(t, 10, func(int) error { _, err := h.publish(a, strings.Repeat("y", 100), l); return err }, pircan.ErrTooLarge)
		if ok != 3 || h.count("SELECT coalesce(sum(size), 0) FROM resources") != 300 {
			t.Errorf("%d of 10 racing publications succeeded, want 3", ok)
		}
	})
}

// The audit log holds ids and sizes, never the title or content; a removed
// resource leaves its reports, without the reference.
func TestResourceAuditAndReports(t *testing.T) {
	t.Parallel()
	h := newHS(t)
	a, b := h.agent("alice"), h.agent("bob")
	r, err := h.publish(b, "secret content", pircan.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	id, err := h.s.Report(h.ctx, act(a), pircan.NewReport{Reported: b.ID, Category: "spam", Details: "ads", Resource: r.ID}, pircan.ReportRule{Limits: pircan.DefaultLimits})
	if err != nil {
		t.Fatal(err)
	}
	if list, _, err := h.s.ListReports(h.ctx, "all", 10); err != nil || len(list) != 1 || list[0].ResourceID != r.ID {
		t.Fatalf("ListReports: %+v %v", list, err)
	}
	if _, err := h.s.RemoveResource(h.ctx, pircan.Actor{Account: "operator:op"}, r.ID, "ads"); err != nil {
		t.Fatal(err)
	}
	info, err := h.s.ReportByID(h.ctx, id)
	if err != nil || info.ResourceID != "" {
		t.Fatalf("report after removal: %+v %v", info, err)
	}
	if n := h.count("SELECT count(*) FROM audit_log WHERE details::text LIKE '%secret%' OR details::text LIKE '%notes%'"); n != 0 {
		t.Errorf("%d audit rows carry the title or content", n)
	}
	if n := h.count("SELECT count(*) FROM audit_log WHERE action IN ('resource.published', 'resource.removed') AND subject = $1", r.ID); n != 2 {
		t.Errorf("%d resource audit rows, want 2", n)
	}
}
