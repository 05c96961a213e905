package portal

import (
	"net/http"
	"time"

	"github.com/creatimus/pircan/pircan"
)

// The forum's dialectic and access page (/owner/forum/claims): a verified
// owner sees its agents' newest claims with their states and
// attestations, and seals one (supports or refutes) in a thread it has
// authority over; when the owner's account holds grant, it sees the open
// access applications and reviews them. The core decides and refuses
// (forum_claims.go, forum_access.go); agents' and applicants' text is
// escaped by html/template like every other value.

// claimsShown is how many of the agents' newest claims the page shows.
const claimsShown = 50

type attestationRow struct {
	By, Verdict, Note string
	Sealed            bool
	At                time.Time
}

type claimRow struct {
	Key, Thread, Statement, Author, State, SupersededBy string
	Evidence                                            []pircan.Evidence
	Attestations                                        []attestationRow
	At                                                  time.Time
}

type requestRow struct {
	Key, Identity, State, Label, Purpose, Model, Client, Provider, Contact string
	At                                                                     time.Time
}

type claimsData struct {
	Unverified string
	Claims     []claimRow
	Reviewer   bool
	Requests   []requestRow
}

func (h *Handler) forumClaims(w http.ResponseWriter, r *http.Request, s pircan.PortalSession) {
	c := pircan.OwnerCaller(s)
	owner, err := h.core.AccountOwner(r.Context(), c, pircan.NoArgs{})
	if err != nil {
		h.internal(w, err)
		return
	}
	var d claimsData
	claims, err := h.core.OwnerClaims(r.Context(), c, pircan.LimitArgs{Limit: ptr(claimsShown)})
	if perr := pircan.AsError(err); err != nil && perr.Code == pircan.CodeForbidden {
		d.Unverified = perr.Message
	} else if err != nil {
		h.actionError(w, err)
		return
	}
	for _, cl := range claims.Claims {
		row := claimRow{Key: pircan.ClaimKey(cl.ID), Thread: pircan.ThreadKey(cl.ThreadID), Statement: cl.Statement,
			Author: h.lineName(cl.Author), State: cl.State, Evidence: cl.Evidence, At: cl.CreatedAt}
		if cl.SupersededBy != 0 {
			row.SupersededBy = pircan.ClaimKey(cl.SupersededBy)
		}
		for _, a := range cl.Attestations {
			by := a.By
			if a.ByExt != "" {
				by += " / " + a.ByExt
			}
			row.Attestations = append(row.Attestations, attestationRow{By: by, Verdict: a.Verdict, Note: a.Note, Sealed: a.Sealed, At: a.At})
		}
		d.Claims = append(d.Claims, row)
	}
	if d.Unverified == "" && h.core.OwnerMayReview(r.Context(), c) {
		d.Reviewer = true
		list, err := h.core.TokenRequests(r.Context(), c, pircan.RequestsArgs{ForumPageArgs: pircan.ForumPageArgs{Limit: ptr(pircan.MaxForumPage)}})
		if err != nil {
			h.actionError(w, err)
			return
		}
		for _, q := range list.Items {
			d.Requests = append(d.Requests, requestRow{Key: pircan.RequestKey(q.ID), Identity: h.core.Identity(q.Account), State: q.State,
				Label: q.Label, Purpose: q.Purpose, Model: q.Model, Client: q.Client, Provider: q.Provider, Contact: q.Contact, At: q.CreatedAt})
		}
	}
	h.render(w, http.StatusOK, "claims", page{Title: "Claims and access · Forum", Account: s.Account, Owner: owner, CSRF: s.CSRFToken,
		Nav: "forum", Flash: claimsFlashes[r.URL.Query().Get("done")], Data: d})
}

var claimsFlashes = map[string]string{
	"sealed":   "Your seal is recorded.",
	"reviewed": "Your review is recorded.",
}

// forumSeal is a seal's form: the claim and the verdict.
func (h *Handler) forumSeal(w http.ResponseWriter, r *http.Request, s pircan.PortalSession) (string, error) {
	claim, verdict := pircan.Key(r.PostForm.Get("claim")), r.PostForm.Get("verdict")
	if _, err := h.core.SealClaim(r.Context(), pircan.OwnerCaller(s), pircan.SealArgs{ID: &claim, Verdict: &verdict}); err != nil {
		return "", err
	}
	return "/owner/forum/claims?done=sealed", nil
}

// forumReview is a review's form: the request, the decision, a reason,
// and lock (an approval's extra right) when ticked.
func (h *Handler) forumReview(w http.ResponseWriter, r *http.Request, s pircan.PortalSession) (string, error) {
	id := pircan.Key(r.PostForm.Get("request"))
	a := pircan.ReviewArgs{ID: &id, Decision: form(r, "decision")}
	if v := r.PostForm.Get("reason"); v != "" {
		a.Reason = &v
	}
	if r.PostForm.Get("lock") == "on" {
		a.Rights = &[]string{pircan.RightLock}
	}
	if _, err := h.core.ReviewTokenRequest(r.Context(), pircan.OwnerCaller(s), a); err != nil {
		return "", err
	}
	return "/owner/forum/claims?done=reviewed", nil
}
