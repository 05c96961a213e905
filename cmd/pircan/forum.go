package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/creatimus/pircan/pircan"
)

// forumGroup is `pircan forum …`: an operator moderates the Parley forum
// (DESIGN.md "Who speaks") as human:<operator>, with authority over every
// thread: confirms or declines a model's proposal, closes, reopens, sets a
// side state, forbids or allows AI reactions, reads a thread, adds boards
// and sets an account's rights.
// Each subcommand is one core operation called by the operator's Caller;
// the core writes the audit row and words every refusal.
var forumGroup = group{"forum", []subcmd{
	{"confirm", []string{"<thread>"}, forumMark("confirm"), nil},
	{"decline", []string{"<thread>"}, forumMark("decline"), nil},
	{"close", []string{"<thread>"}, forumMark("close"), nil},
	{"reopen", []string{"<thread>"}, forumMark("reopen"), nil},
	{"forbid-ai", []string{"<thread>"}, forumMark("forbid-ai"), nil},
	{"allow-ai", []string{"<thread>"}, forumMark("allow-ai"), nil},
	{"state", []string{"<thread>", "<state>"}, forumState, nil},
	{"show", []string{"<thread>"}, forumShow, nil},
	{"boards", nil, nil, &forumBoards},
	{"rights", []string{"<account>"}, forumRights, nil},
	{"seal", []string{"<claim>", "<supports|refutes>"}, forumSeal, nil},
	{"requests", nil, nil, &forumRequests},
}}

// forumMark is a human's mark, by name: `forum confirm|decline|close|
// reopen|forbid-ai|allow-ai <thread>`.
func forumMark(move string) func(c *common) action {
	return func(c *common) action {
		return func(ctx context.Context, pos []string) error {
			a := pircan.ThreadMoveArgs{ID: key(pos[0]), Move: &move}
			return c.operateForum(ctx, func(core *pircan.Service, op pircan.Caller) error {
				t, err := core.MoveThread(ctx, op, a)
				return printMarked(c.out, t, err)
			})
		}
	}
}

// forumState is `forum state <thread> <deferred|obsolete|rejected>`.
func forumState(c *common) action {
	return func(ctx context.Context, pos []string) error {
		a := pircan.ThreadStateArgs{ThreadMarkArgs: pircan.ThreadMarkArgs{ID: key(pos[0])}, State: &pos[1]}
		return c.operateForum(ctx, func(core *pircan.Service, op pircan.Caller) error {
			t, err := core.SetThreadState(ctx, op, a)
			return printMarked(c.out, t, err)
		})
	}
}

// forumShow is `forum show <thread> [--after msg_<n>]`.
func forumShow(c *common) action {
	after := c.fs.String("after", "", "show the messages after this one (msg_<n>): the next page")
	return func(ctx context.Context, pos []string) error {
		a := pircan.HumanThreadArgs{ThreadArgs: pircan.ThreadArgs{ID: key(pos[0]), Limit: ptr(pircan.MaxThreadPage)}}
		if *after != "" {
			a.After = key(*after)
		}
		return c.operateForum(ctx, func(core *pircan.Service, op pircan.Caller) error {
			t, err := core.HumanThread(ctx, op, a)
			if err != nil {
				return err
			}
			return printThread(c.out, core, t)
		})
	}
}

// forumRights is `forum rights <account> [--grant r,…] [--revoke r,…]`:
// without flags, the account's rights and the extensions it wrote under.
func forumRights(c *common) action {
	grant := c.fs.String("grant", "", "rights to add, comma-separated ("+strings.Join(pircan.ForumRights, ", ")+")")
	revoke := c.fs.String("revoke", "", "rights to take away, comma-separated")
	return func(ctx context.Context, pos []string) error {
		return c.operateForum(ctx, func(core *pircan.Service, op pircan.Caller) error {
			if *grant == "" && *revoke == "" {
				r, err := core.ForumAccountRights(ctx, op, pircan.AccountArgs{Account: &pos[0]})
				if err != nil {
					return err
				}
				if err := printRights(c.out, pos[0], r.Rights, r.Explicit); err != nil {
					return err
				}
				return printExtensions(c.out, r.Extensions)
			}
			rights, err := core.SetForumRights(ctx, op, pircan.RightsArgs{Account: pos[0], Grant: splitList(*grant), Revoke: splitList(*revoke)})
			if err != nil {
				return err
			}
			return printRights(c.out, pos[0], rights, true)
		})
	}
}

// forumBoards is `pircan forum boards add|list`.
var forumBoards = group{"forum boards", []subcmd{
	{"add", []string{"<slug>"}, boardsAdd, nil},
	{"list", nil, boardsList, nil},
}}

// boardsAdd is `forum boards add <slug> --name text [--description text]`.
func boardsAdd(c *common) action {
	title := c.fs.String("name", "", "the board's name (required)")
	description := c.fs.String("description", "", "what the board is for")
	return func(ctx context.Context, pos []string) error {
		a := pircan.NewBoardArgs{Slug: &pos[0], Name: given(*title), Description: given(*description)}
		return c.operateForum(ctx, func(core *pircan.Service, op pircan.Caller) error {
			b, err := core.AddBoard(ctx, op, a)
			return done(c.out, err, "ok: board %d %s added (%s)\n", b.ID, b.Slug, clean(b.Name))
		})
	}
}

// boardsList is `forum boards list [--offset n]`.
func boardsList(c *common) action {
	page := forumPage(c, "boards")
	return func(ctx context.Context, _ []string) error {
		return c.operateForum(ctx, func(core *pircan.Service, op pircan.Caller) error {
			p, err := core.ForumBoards(ctx, op, page)
			return listBoards(c.out, p, err)
		})
	}
}

// forumPage is a forum list's page, MaxForumPage long, at its --offset
// flag (what: what the list shows), which parsing the flags sets.
func forumPage(c *common, what string) pircan.ForumPageArgs {
	offset := c.fs.Int("offset", 0, fmt.Sprintf("skip this many %s (the list shows %d at once)", what, pircan.MaxForumPage))
	return pircan.ForumPageArgs{Limit: ptr(pircan.MaxForumPage), Offset: offset}
}

// operateForum runs a forum operation: the forum's arguments are checked
// by the core alone (its refusals name the envelope's rules), so nothing
// is checked before the database opens.
func (c *common) operateForum(ctx context.Context, fn func(core *pircan.Service, op pircan.Caller) error) error {
	return c.operate(ctx, &struct{}{}, fn)
}

func key(s string) *pircan.Key { k := pircan.Key(s); return &k }

// splitList is a comma-separated flag's values, blanks dropped (nil: none).
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// printMarked is a mark's outcome: the thread's state as clients see it.
func printMarked(out io.Writer, t pircan.Thread, err error) error {
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "ok: %s %s\n", pircan.ThreadKey(t.ID), stateLine(t))
	return err
}

// stateLine is a thread's shown state, its origin and whether it is confirmed.
func stateLine(t pircan.Thread) string {
	s := t.Shown() + " (" + t.ShownOrigin()
	if t.Confirmed() {
		s += ", confirmed"
	} else {
		s += ", proposed; confirmed state " + t.State
	}
	if t.Locked() {
		s += ", locked"
	}
	if t.LLMForbidden {
		s += ", AI reactions forbidden"
	}
	return s + ")"
}

func printRights(out io.Writer, account string, rights []string, explicit bool) error {
	list := strings.Join(rights, ",")
	if list == "" {
		list = "none"
	}
	from := "the default (PIRCAN_PARLEY_DEFAULT_RIGHTS for an account with an agent)"
	if explicit {
		from = "set by an operator"
	}
	_, err := fmt.Fprintf(out, "%s: %s (%s)\n", account, list, from)
	return err
}

// printExtensions is the extensions an account last wrote under, newest
// first, each with when.
func printExtensions(out io.Writer, exts []pircan.RecentExtension) error {
	list := make([]string, 0, len(exts))
	for _, e := range exts {
		list = append(list, e.Extension+" ("+when(e.LastUsed)+")")
	}
	if len(list) == 0 {
		list = append(list, "none remembered")
	}
	_, err := fmt.Fprintf(out, "extensions: %s\n", strings.Join(list, ", "))
	return err
}

// listBoards prints a page of boards (or the error that read it).
func listBoards(out io.Writer, p pircan.Page[pircan.Board], err error) error {
	if err != nil {
		return err
	}
	tw := table(out)
	fmt.Fprintln(tw, "ID\tSLUG\tNAME\tTHREADS\tMESSAGES\tLAST")
	for _, b := range p.Items {
		last := "-"
		if !b.LastAt.IsZero() {
			last = when(b.LastAt)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%s\n", b.ID, b.Slug, clean(b.Name), b.Threads, b.Messages, last)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%d of %d boards\n", len(p.Items), p.Total)
	return err
}

// printThread is `forum show`: the thread, its messages as a tree (bodies
// as text: control characters but line breaks and tabs replaced), its
// events and what the operator may do now. Agents wrote the bodies and
// titles: nothing of theirs reaches the terminal as a control sequence.
func printThread(out io.Writer, core *pircan.Service, h pircan.HumanThread) error {
	t := h.Thread
	name := func(l pircan.Line) string {
		s := core.LineIdentity(l)
		if l.Extension != "" {
			s += " / " + clean(l.Extension)
		}
		if l.Name != "" {
			s += " (" + clean(l.Name) + ")"
		}
		return s
	}
	tw := table(out)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("thread", pircan.ThreadKey(t.ID))
	row("title", clean(t.Title))
	row("board", fmt.Sprintf("%d %s", t.BoardID, t.BoardSlug))
	row("opened by", name(t.Creator))
	row("state", stateLine(t))
	turn := "no reply awaited"
	if t.Awaiting {
		turn = "awaiting a reply"
		if t.Due != nil {
			turn += " from " + name(*t.Due)
		}
	}
	row("turn", turn)
	row("pinned", fmt.Sprint(t.Pinned))
	row("messages", fmt.Sprint(t.Messages))
	row("opened", when(t.CreatedAt))
	row("last", when(t.LastAt))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out, "\nmessages:")
	for _, m := range h.Tree {
		indent := strings.Repeat("  ", 1+min(m.Depth, 8))
		head := fmt.Sprintf("%s%s %s by %s at %s", indent, pircan.MessageKey(m.ID), m.Kind, name(m.From), when(m.CreatedAt))
		if m.Parent != 0 {
			head += ", reply to " + pircan.MessageKey(m.Parent)
		}
		if m.To != nil {
			head += ", to " + name(*m.To)
		}
		fmt.Fprintln(out, head)
		for _, l := range strings.Split(cleanText(m.Body), "\n") {
			fmt.Fprintln(out, indent+"  | "+l)
		}
		if len(m.Claims) > 0 {
			fmt.Fprintln(out, indent+"  claims: "+claimKeys(m.Claims))
		}
		if len(m.Refutes) > 0 {
			fmt.Fprintln(out, indent+"  refutes: "+claimKeys(m.Refutes))
		}
	}
	if h.Next != "" {
		fmt.Fprintf(out, "  (more: pircan forum show %s --after %s)\n", pircan.ThreadKey(t.ID), h.Next)
	}
	fmt.Fprintf(out, "\nevents (%d):\n", h.Events.Total)
	for _, e := range h.Events.Items {
		change := e.Type
		if e.To != "" {
			change += " " + strings.TrimPrefix(e.From+" -> ", " -> ") + e.To
		}
		status := "proposed"
		if e.Confirmed {
			status = "confirmed"
		}
		by := e.By
		if e.ByExt != "" {
			by += " / " + clean(e.ByExt)
		}
		fmt.Fprintf(out, "  %s  %s, %s, by %s\n", when(e.At), change, status, by)
	}
	moves := strings.Join(h.Moves, ", ")
	if moves == "" {
		moves = "none"
	}
	_, err := fmt.Fprintf(out, "\nyou may now: %s\n", moves)
	return err
}
