package portal

import (
	"net/http"
	"strconv"

	"github.com/creatimus/pircan/pircan"
)

// The agents page (the signed-in index) and its actions: policy,
// owner-decides requests, agreements, owner bindings.

type agentsData struct {
	pircan.OwnerView
	Policies []policyChoice
	Account  string
}

type policyChoice struct{ Value, Text string }

// policyTexts explain each policy (pircan.Policies) to an owner.
var policyTexts = map[string]string{
	pircan.PolicyAgentDecides: "the agent accepts or declines itself",
	pircan.PolicyOwnerDecides: "you decide here; the agent cannot change this",
	pircan.PolicyAutoAccept:   "message-only requests are accepted at once",
	pircan.PolicyDeny:         "every request is declined at once",
}

var policyChoices = func() []policyChoice {
	out := make([]policyChoice, len(pircan.Policies))
	for i, p := range pircan.Policies {
		out[i] = policyChoice{p, p + ": " + policyTexts[p]}
	}
	return out
}()

func (h *Handler) agents(w http.ResponseWriter, r *http.Request, s pircan.PortalSession) {
	view, err := h.core.Owned(r.Context(), pircan.OwnerCaller(s), pircan.NoArgs{})
	if err != nil {
		h.internal(w, err)
		return
	}
	h.render(w, http.StatusOK, "agents", page{Title: "Your agents", Account: s.Account, Owner: view.Owner, CSRF: s.CSRFToken,
		Nav: "agents", Flash: flashes[r.URL.Query().Get("done")], Data: agentsData{OwnerView: view, Policies: policyChoices, Account: s.Account}})
}

func (h *Handler) setPolicy(w http.ResponseWriter, r *http.Request, s pircan.PortalSession) (string, error) {
	_, err := h.core.OwnerSetPolicy(r.Context(), pircan.OwnerCaller(s), pircan.ForAgent[pircan.PolicyArgs]{AgentID: form(r, "agent_id"),
		Args: pircan.PolicyArgs{Policy: form(r, "policy")}})
	return "/owner?done=policy", err
}

func (h *Handler) decide(w http.ResponseWriter, r *http.Request, s pircan.PortalSession) (string, error) {
	c, agentID, requestID := pircan.OwnerCaller(s), form(r, "agent_id"), form(r, "request_id")
	switch r.PostForm.Get("decision") {
	case "accept":
		// The form lists the requested scopes as checkboxes: none checked
		// grants none (refused), never "as requested".
		a := pircan.DecideArgs{RequestID: requestID, Scopes: &[]string{}}
		*a.Scopes = append(*a.Scopes, r.PostForm["scopes"]...)
		if v := r.PostForm.Get("ttl_days"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return "", formError("The duration is a whole number of days.")
			}
			a.TTLDays = &n
		}
		_, err := h.core.OwnerAccept(r.Context(), c, pircan.ForAgent[pircan.DecideArgs]{AgentID: agentID, Args: a})
		return "/owner?done=accepted", err
	case "decline":
		_, err := h.core.OwnerDecline(r.Context(), c, pircan.ForAgent[pircan.RequestArgs]{AgentID: agentID, Args: pircan.RequestArgs{RequestID: requestID}})
		return "/owner?done=declined", err
	}
	return "", formError("Accept or decline.")
}

func (h *Handler) revoke(w http.ResponseWriter, r *http.Request, s pircan.PortalSession) (string, error) {
	agentID, agreementID := r.PostForm.Get("agent_id"), r.PostForm.Get("agreement_id")
	if r.PostForm.Get("confirm") != "yes" {
		if err := pircan.CheckID("agent_id", agentID); err != nil {
			return "", err
		}
		if err := pircan.CheckID("agreement_id", agreementID); err != nil {
			return "", err
		}
		h.confirm(w, s, confirmData{Heading: "Revoke this agreement?",
			Text:   "The agreement " + agreementID + " ends for both parties at once; the other agent is told. This cannot be undone: a new agreement needs a new request.",
			Action: "/owner/revoke", Button: "Revoke", ID: "confirm-revoke",
			Fields: map[string]string{"agent_id": agentID, "agreement_id": agreementID}})
		return "", nil
	}
	_, err := h.core.OwnerRevoke(r.Context(), pircan.OwnerCaller(s),
		pircan.ForAgent[pircan.RevokeArgs]{AgentID: &agentID, Args: pircan.RevokeArgs{AgreementID: &agreementID}})
	return "/owner?done=revoked", err
}

func (h *Handler) decideBinding(w http.ResponseWriter, r *http.Request, s pircan.PortalSession) (string, error) {
	a := pircan.BindingArgs{AgentID: form(r, "agent_id"), Decision: form(r, "decision")}
	res, err := h.core.DecideBinding(r.Context(), pircan.OwnerCaller(s), a)
	if err != nil || !res.Confirmed {
		return "/owner?done=refused", err
	}
	return "/owner?done=confirmed", nil
}

func (h *Handler) release(w http.ResponseWriter, r *http.Request, s pircan.PortalSession) (string, error) {
	agentID := r.PostForm.Get("agent_id")
	if r.PostForm.Get("confirm") != "yes" {
		if err := pircan.CheckID("agent_id", agentID); err != nil {
			return "", err
		}
		h.confirm(w, s, confirmData{Heading: "Release this agent?",
			Text:   "You stop being the owner of agent " + agentID + ". Its own account acts as its owner again and can change a locked policy.",
			Action: "/owner/release", Button: "Release", ID: "confirm-release", Fields: map[string]string{"agent_id": agentID}})
		return "", nil
	}
	_, err := h.core.ReleaseAgent(r.Context(), pircan.OwnerCaller(s), pircan.AgentArgs{AgentID: &agentID})
	return "/owner?done=released", err
}
