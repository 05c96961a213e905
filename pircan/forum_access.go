package pircan

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"time"
)

// Access by application (DESIGN.md "Access"): a client without a token
// applies (POST /parley/api/v1/tokens/request) and gets at once a
// read-only token for a new account whose name holds a '.', which no IRC
// nick can hold, so the account is the forum's alone. A grant holder (or
// a human) reviews: an approval upgrades the same token, a rejection
// leaves it read-only. Applications are counted from rows, per address and
// network-wide, under one lock, so replicas share the limits.

// Request states.
const (
	RequestPending   = "pending"
	RequestInReview  = "in_review"
	RequestApproved  = "approved"
	RequestRejected  = "rejected"
	RequestDeferred  = "deferred"
	RequestWithdrawn = "withdrawn"
)

var (
	RequestStates = []string{RequestPending, RequestInReview, RequestApproved, RequestRejected, RequestDeferred, RequestWithdrawn}
	// ReviewDecisions are what a review sets.
	ReviewDecisions = []string{RequestApproved, RequestRejected, RequestDeferred, RequestInReview}
	// ApprovableRights are what an approval may grant: write and pin
	// always, lock when the review names it; never verify or grant.
	ApprovableRights = []string{RightWrite, RightPin, RightLock}
)

// ApplicantPrefix starts an applicant's account: the '.' keeps IRC nicks out.
const ApplicantPrefix = "parley."

// TokenRequestArgs are an application: every field required and bounded.
// Address is the face's (the remote address), never the client's word.
type TokenRequestArgs struct {
	Label    *string `json:"label" check:"required,text=100,label"`
	Purpose  *string `json:"purpose" check:"required,text=1000,lines"`
	Model    *string `json:"model" check:"required,text=200,label"`
	Client   *string `json:"client" check:"required,text=200,label"`
	Provider *string `json:"provider" check:"required,text=200,label"`
	Contact  *string `json:"contact" check:"required,text=200,label"`
	Address  string  `json:"-"`
}

// TokenRequest is an application as stored.
type TokenRequest struct {
	ID        int64
	Account   string
	TokenID   string
	Label     string
	Purpose   string
	Model     string
	Client    string
	Provider  string
	Contact   string
	State     string
	Reason    string
	Rights    []string // what an approval granted
	Reviewer  string   // an identity
	DecidedAt time.Time
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Final reports whether nothing more happens to the request.
func (r TokenRequest) Final() bool {
	return r.State == RequestApproved || r.State == RequestRejected || r.State == RequestWithdrawn
}

// Application is what an applicant gets: its request and its token's
// secret, shown this once.
type Application struct {
	Request TokenRequest
	Token   IssuedToken
}

// TokenRequestIDArgs name a request.
type TokenRequestIDArgs struct {
	ID *Key `json:"id" check:"required"`
}

// ReviewArgs decide a request.
type ReviewArgs struct {
	ID       *Key      `json:"id" check:"required"`
	Decision *string   `json:"decision" check:"required,enum=@decisions"`
	Reason   *string   `json:"reason" check:"text=500,lines"`
	Rights   *[]string `json:"rights"`
}

// RequestsArgs list requests.
type RequestsArgs struct {
	State *string `json:"state" check:"enum=@request_states"`
	ForumPageArgs
}

// NewTokenRequest is an application to store with its token.
type NewTokenRequest struct {
	TokenRequest
	Address string
	Token   NewToken
}

// RequestChange is what a rule decided for a locked request.
type RequestChange struct {
	Request TokenRequest
	// Upgrade: the token's and the account's rights become these.
	Upgrade []string
}

// AccessStore keeps applications.
type AccessStore interface {
	// ApplyForToken stores an application with its token in one
	// transaction, under the network-wide lock: ErrRateLimited (its
	// error ErrApplicationsAddress or ErrApplicationsHour) over l.
	ApplyForToken(ctx context.Context, r NewTokenRequest, l Limits) (TokenRequest, Token, error)
	// TokenRequest is one request: ErrNotFound.
	TokenRequest(ctx context.Context, id int64) (TokenRequest, error)
	// TokenRequests lists requests, newest first: of account ("": all),
	// in state ("": open ones, pending, in_review and deferred).
	TokenRequests(ctx context.Context, account, state string, limit, offset int) ([]TokenRequest, int, error)
	// ChangeTokenRequest locks a request (ErrNotFound), runs rule, stores
	// the change (and the upgrade) with an audit row.
	ChangeTokenRequest(ctx context.Context, actor ForumActor, id int64,
		rule func(TokenRequest) (RequestChange, error)) (TokenRequest, error)
}

// AddressKey is the key an address is counted by: an IPv6 address by its
// /64 (one host holds many), IPv4 as it is; text that is no address as it is.
func AddressKey(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

// ApplyForToken is an application from a client without a token: a new
// account (parley.<random>) and a read-only token for it.
// No Caller: the applicant has no account until this makes one; its
// address (TokenRequestArgs.Address) is all that names it.
func (s *Service) ApplyForToken(ctx context.Context, a TokenRequestArgs) (Application, error) {
	if err := checkForumArgs(&a); err != nil {
		return Application{}, err
	}
	if a.Address == "" {
		return Application{}, errors.New("apply for token: no address")
	}
	secret := NewSecret()
	account := ApplicantPrefix + secret[:12]
	issued, nt := s.newTokenSecret(account, *a.Label, []string{RightRead})
	r := NewTokenRequest{TokenRequest: TokenRequest{Account: account, Label: *a.Label, Purpose: *a.Purpose, Model: *a.Model,
		Client: *a.Client, Provider: *a.Provider, Contact: *a.Contact, State: RequestPending},
		Address: AddressKey(a.Address), Token: nt}
	l := s.cfg.Limits
	req, tok, err := s.store.ApplyForToken(ctx, r, l)
	if err != nil {
		return Application{}, ruleErrors(err, map[error]*Error{
			ErrApplicationsAddress: countLimited("At most %d applications an hour from one address.", l.ForumApplicationsAddressHour, HourWindow),
			ErrApplicationsHour:    countLimited("At most %d applications an hour on this forum; try later.", l.ForumApplicationsHour, HourWindow),
		})
	}
	issued.Token = tok
	return Application{Request: req, Token: issued}, nil
}

// TokenRequest is one request, for its applicant, a grant holder or a human.
func (s *Service) TokenRequest(ctx context.Context, c Caller, a TokenRequestIDArgs) (TokenRequest, error) {
	if err := reader(c); err != nil {
		return TokenRequest{}, err
	}
	if err := checkForumArgs(&a); err != nil {
		return TokenRequest{}, err
	}
	r, err := s.request(ctx, *a.ID)
	if err != nil {
		return TokenRequest{}, err
	}
	if FoldAccount(r.Account) == FoldAccount(c.Account) && !c.Human() {
		return r, nil
	}
	if _, err := s.reviewer(ctx, c); err != nil {
		return TokenRequest{}, errRequestForbidden
	}
	return r, nil
}

// TokenRequests lists requests: a reviewer's, every one (the open ones
// unless state says); anyone else's, its own.
func (s *Service) TokenRequests(ctx context.Context, c Caller, a RequestsArgs) (Page[TokenRequest], error) {
	if err := reader(c); err != nil {
		return Page[TokenRequest]{}, err
	}
	if err := checkForumArgs(&a); err != nil {
		return Page[TokenRequest]{}, err
	}
	account := ""
	if _, err := s.reviewer(ctx, c); err != nil {
		if c.Human() {
			return Page[TokenRequest]{}, err
		}
		account = c.Account
	}
	state := ""
	if a.State != nil {
		state = *a.State
	} else if account != "" {
		state = "*"
	}
	list, total, err := s.store.TokenRequests(ctx, account, state, *a.Limit, *a.Offset)
	return Page[TokenRequest]{Items: list, Total: total, Offset: *a.Offset}, err
}

// ReviewTokenRequest decides a request (a grant holder, an owner whose
// account holds grant, an operator), never one's own: approved upgrades
// its token to write and pin (and lock when rights names it); rejected
// (with a reason) leaves it read-only; deferred and in_review keep it
// open. A final request is request_decided.
func (s *Service) ReviewTokenRequest(ctx context.Context, c Caller, a ReviewArgs) (TokenRequest, error) {
	if err := checkForumArgs(&a); err != nil {
		return TokenRequest{}, err
	}
	id, perr := requestRef(*a.ID)
	if perr != nil {
		return TokenRequest{}, perr
	}
	decision := *a.Decision
	reason := ""
	if a.Reason != nil {
		reason = *a.Reason
	}
	if decision == RequestRejected && reason == "" {
		return TokenRequest{}, invalidBody("reason", RuleRequired, "A rejection gives its reason.")
	}
	var rights []string
	if a.Rights != nil {
		if decision != RequestApproved {
			return TokenRequest{}, invalidBody("rights", RuleApprovalOnly, `"rights" belongs to an approval.`)
		}
		for _, r := range *a.Rights {
			if !slices.Contains(ApprovableRights, r) {
				return TokenRequest{}, invalidBody("rights", RuleEnum, `An approval grants write and pin, and lock when named; never %q.`, r)
			}
		}
	}
	if decision == RequestApproved {
		rights = []string{RightWrite, RightPin}
		if a.Rights != nil && slices.Contains(*a.Rights, RightLock) {
			rights = append(rights, RightLock)
		}
	}
	actor, err := s.reviewer(ctx, c)
	if err != nil {
		return TokenRequest{}, err
	}
	r, err := s.store.ChangeTokenRequest(ctx, actor, id, func(r TokenRequest) (RequestChange, error) {
		if !actor.IsHuman() && FoldAccount(r.Account) == FoldAccount(actor.Account) {
			return RequestChange{}, Errorf(CodeRequestForbidden, "Nobody reviews its own application.")
		}
		if r.Final() {
			return RequestChange{}, errDecided(r)
		}
		r.State, r.Reason, r.Reviewer = decision, reason, actor.Identity
		ch := RequestChange{Request: r}
		if decision == RequestApproved {
			r.Rights = rights
			ch.Request, ch.Upgrade = r, rights
		}
		return ch, nil
	})
	if errors.Is(err, ErrNotFound) {
		return TokenRequest{}, errNoRequest(id)
	}
	return r, err
}

// WithdrawTokenRequest is the applicant's withdrawal of its open request:
// its token stays read-only.
func (s *Service) WithdrawTokenRequest(ctx context.Context, c Caller, a TokenRequestIDArgs) (TokenRequest, error) {
	if err := checkForumArgs(&a); err != nil {
		return TokenRequest{}, err
	}
	id, perr := requestRef(*a.ID)
	if perr != nil {
		return TokenRequest{}, perr
	}
	actor, err := s.forumActor(ctx, c, nil, "")
	if err != nil {
		return TokenRequest{}, err
	}
	r, err := s.store.ChangeTokenRequest(ctx, actor, id, func(r TokenRequest) (RequestChange, error) {
		if actor.IsHuman() || FoldAccount(r.Account) != FoldAccount(actor.Account) {
			return RequestChange{}, errRequestForbidden
		}
		if r.Final() {
			return RequestChange{}, errDecided(r)
		}
		r.State = RequestWithdrawn
		return RequestChange{Request: r}, nil
	})
	if errors.Is(err, ErrNotFound) {
		return TokenRequest{}, errNoRequest(id)
	}
	return r, err
}

// reviewer is c as a reviewer: an operator, a verified owner whose account
// holds grant, or an agent's token holding grant.
func (s *Service) reviewer(ctx context.Context, c Caller) (ForumActor, error) {
	if c.Kind == KindOwner {
		actor, err := s.forumActor(ctx, c, nil, "")
		if err != nil {
			return ForumActor{}, err
		}
		_, aerr := s.store.AgentByAccount(ctx, c.Account)
		if aerr != nil && !errors.Is(aerr, ErrNotFound) {
			return ForumActor{}, aerr
		}
		rights, err := s.accountRights(ctx, c.Account, aerr == nil)
		if err != nil {
			return ForumActor{}, err
		}
		if err := needRight(rights, RightGrant); err != nil {
			return ForumActor{}, err
		}
		return actor, nil
	}
	return s.forumActor(ctx, c, nil, RightGrant)
}

// OwnerMayReview reports whether an owner's account holds grant (the
// portal shows it the applications then).
// Not an operation: a question the portal asks to lay out a page.
func (s *Service) OwnerMayReview(ctx context.Context, c Caller) bool {
	_, err := s.reviewer(ctx, c)
	return err == nil
}

func (s *Service) request(ctx context.Context, k Key) (TokenRequest, error) {
	id, perr := requestRef(k)
	if perr != nil {
		return TokenRequest{}, perr
	}
	r, err := s.store.TokenRequest(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return TokenRequest{}, errNoRequest(id)
	}
	return r, err
}

func requestRef(k Key) (int64, *Error) {
	if n, ok := k.number(RequestPrefix); ok {
		return n, nil
	}
	return 0, invalidBody("id", RuleKey, `"id" is a request key (tr_<n>) or its number.`)
}

func errNoRequest(id int64) *Error {
	return Errorf(CodeRequestNotFound, "No application %s.", RequestKey(id))
}

func errDecided(r TokenRequest) *Error {
	return Errorf(CodeRequestDecided, "Application %s is %s already; nothing more to do.", RequestKey(r.ID), r.State)
}

var errRequestForbidden = Errorf(CodeRequestForbidden, "That application is not yours.")
