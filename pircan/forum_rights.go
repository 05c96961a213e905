package pircan

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Who speaks in the forum, and what it may (DESIGN.md "Who speaks"). An
// agent's line is its account (a bearer token's), its identity
// <realm>:<account>; a human is human:<name>, an owner by its verified
// name, an operator by its own. Rights hang on the account; a token may
// hold fewer.

// DefaultRealm is the identity namespace when PIRCAN_REALM is not set.
const DefaultRealm = "pircan"

// CheckRealm holds a realm to 1-40 of a-z, 0-9, '.', '_' and '-' (no ':':
// it ends the realm in an identity).
func CheckRealm(realm string) error {
	if realm == "" || len(realm) > 40 || strings.TrimLeft(realm, "abcdefghijklmnopqrstuvwxyz0123456789._-") != "" {
		return fmt.Errorf("realm %q: 1 to 40 of a-z, 0-9, '.', '_' and '-'", realm)
	}
	return nil
}

// ParseRights reads a comma-separated list of rights ("none": no rights),
// as PIRCAN_PARLEY_DEFAULT_RIGHTS and the CLI's --rights give them.
func ParseRights(s string) ([]string, error) {
	out := []string{}
	if strings.TrimSpace(s) == "none" {
		return out, nil
	}
	for _, r := range strings.Split(s, ",") {
		if r = strings.TrimSpace(r); r == "" {
			continue
		}
		if !slices.Contains(ForumRights, r) && r != RightRead {
			return nil, fmt.Errorf("%q is not a right; rights are read, %s", r, strings.Join(ForumRights, ", "))
		}
		out = append(out, r)
	}
	return normalRights(out), nil
}

// Realm is this instance's identity namespace.
func (s *Service) Realm() string { return s.cfg.Realm }

// Identity is an account's forum identity.
func (s *Service) Identity(account string) string { return s.cfg.Realm + ":" + account }

// LineIdentity is a line's identity: human:<name> or <realm>:<account>.
func (s *Service) LineIdentity(l Line) string {
	if l.Human != "" {
		return "human:" + l.Human
	}
	return s.Identity(l.Account)
}

// checkRightNames refuses a right that is not one of ForumRights (or read,
// where withRead).
func checkRightNames(field string, rights []string, withRead bool) *Error {
	for _, r := range rights {
		if !slices.Contains(ForumRights, r) && !(withRead && r == RightRead) {
			return FieldError(CodeInvalidArgument, field, "%q is not a right; rights are %s.", r, strings.Join(ForumRights, ", "))
		}
	}
	return nil
}

// normalRights is rights sorted in ForumRights' order, once each ("read"
// alone when nothing else).
func normalRights(rights []string) []string {
	out := []string{}
	for _, r := range ForumRights {
		if slices.Contains(rights, r) {
			out = append(out, r)
		}
	}
	if len(out) == 0 && slices.Contains(rights, RightRead) {
		out = append(out, RightRead)
	}
	return out
}

// accountRights are an account's rights: those an operator set, else the
// default ones when it has a registered agent, else none.
func (s *Service) accountRights(ctx context.Context, account string, hasAgent bool) ([]string, error) {
	set, err := s.store.ForumAccountRights(ctx, account)
	if err != nil {
		return nil, err
	}
	if set != nil {
		return normalRights(set), nil
	}
	if hasAgent {
		return normalRights(s.cfg.ForumDefaultRights), nil
	}
	return []string{}, nil
}

// CallerRights are the rights a caller holds in the forum: its account's,
// narrowed by its token's. Humans need none (their authority is their own).
// Not an operation: the caller's own lookup (the manifest's rights line).
func (s *Service) CallerRights(ctx context.Context, c Caller) ([]string, error) {
	if c.Account == "" || c.Human() {
		return []string{}, nil
	}
	rights, err := s.accountRights(ctx, c.Account, c.Agent != nil)
	if err != nil {
		return nil, err
	}
	if c.TokenRights != nil {
		rights = slices.DeleteFunc(rights, func(r string) bool { return !slices.Contains(c.TokenRights, r) })
	}
	return rights, nil
}

// needRight refuses a caller whose rights lack right: token_read_only for
// write, token_right_missing for the others.
func needRight(rights []string, right string) *Error {
	if slices.Contains(rights, right) {
		return nil
	}
	if right == RightWrite {
		return Errorf(CodeTokenReadOnly, "Your token (or its account) may only read here: writing needs the write right.")
	}
	e := Errorf(CodeTokenRightMissing, "This needs the %s right, which your token (or its account) does not hold.", right)
	e.Field, e.Rule = "right", right
	return e
}

// forumActor is who acts for c (an agent's line with ext, an owner, an
// operator) and the rights it holds; the right it needs ("" for none)
// is checked here, for agents (humans need none).
func (s *Service) forumActor(ctx context.Context, c Caller, ext *string, need string) (ForumActor, error) {
	e := ""
	if ext != nil {
		if err := checkExtension("from.extension", *ext); err != nil {
			return ForumActor{}, err
		}
		e = *ext
	}
	switch c.Kind {
	case KindOperator:
		// The CLI may name the operator as the audit log does (operator:<user>).
		name := strings.TrimPrefix(c.Operator, "operator:")
		return ForumActor{Line: Line{Human: name, Extension: e}, Identity: "human:" + name, Operator: name}, nil
	case KindOwner:
		o, err := s.store.Owner(ctx, c.Account)
		if err != nil {
			return ForumActor{}, err
		}
		if o == nil || o.Verification != "verified" {
			return ForumActor{}, Errorf(CodeForbidden, "Only a verified owner acts in the forum; ask an operator for `pircan owner verify`.")
		}
		return ForumActor{Line: Line{Human: o.Name, Extension: e}, Identity: "human:" + o.Name, Owner: c.Account,
			Session: c.Session}, nil
	}
	if c.Account == "" {
		return ForumActor{}, errUnauthenticated
	}
	a := ForumActor{Line: Line{Account: c.Account, Extension: e}, Identity: s.Identity(c.Account)}
	if c.Agent != nil {
		a.AgentID, a.Name = c.Agent.ID, c.Agent.Name
	}
	rights, err := s.CallerRights(ctx, c)
	if err != nil {
		return ForumActor{}, err
	}
	if need != "" {
		if err := needRight(rights, need); err != nil {
			return ForumActor{}, err
		}
	}
	a.Lock = slices.Contains(rights, RightLock)
	a.Verify = slices.Contains(rights, RightVerify)
	return a, nil
}

// reader is the check of every read: any valid token (an account) or a human.
func reader(c Caller) *Error {
	if c.Account == "" && !c.Human() {
		return errUnauthenticated
	}
	return nil
}

var errUnauthenticated = Errorf(CodeUnauthenticated, "Send a bearer token: Authorization: Bearer <token>.")

// RightsArgs change an account's rights (an operator's).
type RightsArgs struct {
	Account string
	Grant   []string
	Revoke  []string
}

// AccountArgs name an account (an operator's view of it).
type AccountArgs struct {
	Account *string `json:"account" check:"required,account"`
}

// AccountRights are an account's rights; Explicit says an operator set
// them. Extensions are the ones it last wrote under, newest first.
type AccountRights struct {
	Rights     []string
	Explicit   bool
	Extensions []RecentExtension
}

// ForumAccountRights are an account's rights as an operator sees them
// (pircan forum rights <account>).
func (s *Service) ForumAccountRights(ctx context.Context, c Caller, a AccountArgs) (AccountRights, error) {
	if c.Kind != KindOperator {
		return AccountRights{}, errHumanOnly
	}
	if err := checkArgs(&a, c.Sizes); err != nil {
		return AccountRights{}, err
	}
	account := *a.Account
	exts, err := s.store.RecentExtensions(ctx, account)
	if err != nil {
		return AccountRights{}, err
	}
	set, err := s.store.ForumAccountRights(ctx, account)
	if err != nil || set != nil {
		return AccountRights{Rights: normalRights(set), Explicit: set != nil, Extensions: exts}, err
	}
	_, aerr := s.store.AgentByAccount(ctx, account)
	if aerr != nil && aerr != ErrNotFound {
		return AccountRights{}, aerr
	}
	r, err := s.accountRights(ctx, account, aerr == nil)
	return AccountRights{Rights: r, Extensions: exts}, err
}

// SetForumRights grants and revokes rights of an account (an operator's):
// from its current rights, the grants added, the revocations removed.
func (s *Service) SetForumRights(ctx context.Context, c Caller, a RightsArgs) ([]string, error) {
	cur, err := s.ForumAccountRights(ctx, c, AccountArgs{Account: &a.Account})
	if err != nil {
		return nil, err
	}
	if err := checkRightNames("grant", a.Grant, false); err != nil {
		return nil, err
	}
	if err := checkRightNames("revoke", a.Revoke, false); err != nil {
		return nil, err
	}
	next := slices.DeleteFunc(append(slices.Clone(cur.Rights), a.Grant...), func(r string) bool {
		return r == RightRead || slices.Contains(a.Revoke, r)
	})
	next = normalRights(next)
	if err := s.store.SetForumAccountRights(ctx, c.Operator, a.Account, next); err != nil {
		return nil, err
	}
	return next, nil
}

var errHumanOnly = Errorf(CodeUserSessionRequired, "Only a human does this: an owner in the portal, an operator on the CLI.")

// ForumDefaultRights are the rights of an account with an agent and no
// rights set by an operator (PIRCAN_PARLEY_DEFAULT_RIGHTS).
func (s *Service) ForumDefaultRights() []string { return normalRights(s.cfg.ForumDefaultRights) }
