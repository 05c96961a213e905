package store

import (
	"context"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/store/db"
)

// AddTask implements pircan.TaskStore: the hourly limit is counted with the
// requester's row locked (racing tasks from several faces of one agent
// cannot beat it), and the granting agreement is share-locked until the task
// references it, so a racing revoke either waits or is seen. A pipelined
// transaction (pipe.go) of two round trips: the lock (and whether the target
// exists), the hourly count and the agreements; then, once decided from
// them, one statement for the insert, its audit entry and the notification,
// with the commit.
func (s *Store) AddTask(ctx context.Context, actor pircan.Actor, t pircan.NewTask, rule pircan.TaskRule) (pircan.Task, error) {
	me := actor.AgentID
	if t.To == me || !pircan.ValidID(t.To) {
		// Refused before any read: the requester itself, or no agent.
		_, refusal := rule.Decide(me, t, pircan.TaskFacts{})
		return pircan.Task{}, refusal
	}
	var (
		targetExists bool
		lockErr      error
		count        int64
		active       []db.TaskAgreementsRow
		r            db.SendTaskRow
	)
	err := s.withPipe(ctx, func(ctx context.Context, p *pipe) error {
		p.queue(func(q *db.Queries) error {
			targetExists, lockErr = q.LockTaskRequester(ctx, db.LockTaskRequesterParams{Target: t.To, Requester: me})
			return nil
		})
		p.queue(func(q *db.Queries) (err error) {
			count, err = q.CountTasksLastHour(ctx, db.CountTasksLastHourParams{Requester: me, Span: pircan.HourWindow})
			return err
		})
		p.queue(func(q *db.Queries) (err error) {
			active, err = q.TaskAgreements(ctx, db.TaskAgreementsParams{Requester: me, Target: t.To})
			return err
		})
		if err := p.send(ctx); err != nil {
			return err
		}
		if err := notFoundOr(lockErr); err != nil {
			return err // a failure; no row is no target
		}
		facts := pircan.TaskFacts{TargetExists: lockErr == nil && targetExists, TasksHour: int(count)}
		for _, g := range active {
			facts.Active = append(facts.Active, pircan.TaskGranting{ID: g.ID, Scopes: g.Scopes})
		}
		grant, refusal := rule.Decide(me, t, facts)
		if refusal != nil {
			return refusal
		}
		agreement, skill := grant.AgreementID, grant.Skill
		e, err := auditEntry(actor, "task.sent", "", map[string]any{"to": t.To, "agreement": agreement,
			"skill": skill, "size": len(t.Text)})
		if err != nil {
			return err
		}
		p.queue(func(q *db.Queries) (err error) {
			r, err = q.SendTask(ctx, db.SendTaskParams{Requester: me, Target: t.To, AgreementID: agreement,
				Skill: skill, Text: t.Text, ActorAccount: e.ActorAccount, ActorAgent: e.ActorAgent, Action: e.Action,
				Details: e.Details, NotifyType: pircan.NotifyTaskRequest})
			return err
		})
		return nil // withPipe sends it with the commit
	})
	if err != nil {
		return pircan.Task{}, err
	}
	return task(db.TaskOfRow(r)), nil
}

func (s *Store) Tasks(ctx context.Context, tq pircan.TaskQuery) ([]pircan.Task, int, error) {
	var out []pircan.Task
	total := 0
	status, offset := tq.Status, tq.Offset
	if status == "" {
		status = "any"
	}
	err := s.readPlanned(ctx, func(ctx context.Context, q *db.Queries) error {
		p := db.ListTasksParams{Incoming: tq.Incoming, Agent: tq.AgentID, Status: status, Lim: int32(tq.Limit), Off: int32(offset),
			Other: orNil(tq.With), Agreement: orNil(tq.AgreementID)}
		if !tq.ChangedSince.IsZero() {
			p.ChangedSince = pgtype.Timestamptz{Time: tq.ChangedSince, Valid: true}
		}
		rows, err := q.ListTasks(ctx, p)
		for _, r := range rows {
			out = append(out, task(db.TaskOfRow{ID: r.ID, Requester: r.Requester, RequesterName: r.RequesterName,
				Target: r.Target, TargetName: r.TargetName, AgreementID: r.AgreementID, Skill: r.Skill, Text: r.Text,
				State: r.State, Answer: r.Answer, CreatedAt: r.CreatedAt, AnsweredAt: r.AnsweredAt}))
			total = int(r.Total)
		}
		if err == nil && len(rows) == 0 && offset > 0 { // past the end: the total still
			p.Off, p.Lim = 0, 1
			if rows, err = q.ListTasks(ctx, p); err == nil && len(rows) > 0 {
				total = int(rows[0].Total)
			}
		}
		return err
	})
	return out, total, err
}

// Task implements pircan.TaskStore.
func (s *Store) Task(ctx context.Context, agentID, id string) (pircan.Task, error) {
	var out pircan.Task
	err := s.read(ctx, func(ctx context.Context, q *db.Queries) error {
		var err error
		out, err = taskOf(ctx, q, agentID, id)
		return err
	})
	return out, err
}

// AnswerTask implements pircan.TaskStore. The agreement is not consulted: a
// task filed under it stays answerable after a revoke or expiry, as it
// stays cancellable (the work may already be done).
func (s *Store) AnswerTask(ctx context.Context, actor pircan.Actor, id, outcome, text string) (pircan.Task, error) {
	return s.closeTask(ctx, actor, id, true, func(ctx context.Context, q *db.Queries) error {
		if err := q.AnswerTask(ctx, db.AnswerTaskParams{ID: id, State: outcome, Answer: &text}); err != nil {
			return err
		}
		return audit(ctx, q, actor, "task.answered", id, map[string]any{"outcome": outcome, "size": len(text)})
	})
}

// CancelTask implements pircan.TaskStore.
func (s *Store) CancelTask(ctx context.Context, actor pircan.Actor, id string) (pircan.Task, error) {
	return s.closeTask(ctx, actor, id, false, func(ctx context.Context, q *db.Queries) error {
		if err := q.CancelTask(ctx, id); err != nil {
			return err
		}
		return audit(ctx, q, actor, "task.canceled", id, nil)
	})
}

// closeTask takes an open task out of open with its row locked, so of two
// racing answers or cancels exactly one finds it open. Only the target
// answers (byTarget) and only the requester cancels: to anyone else the task
// is not found, whatever its state. change writes the change and its audit
// row; the other party is told (task_update).
func (s *Store) closeTask(ctx context.Context, actor pircan.Actor, id string, byTarget bool,
	change func(context.Context, *db.Queries) error) (pircan.Task, error) {
	var out pircan.Task
	if !pircan.ValidID(id) {
		return out, pircan.ErrNotFound
	}
	err := s.withTx(ctx, func(ctx context.Context, q *db.Queries) error {
		t, err := q.LockTask(ctx, id)
		if err != nil {
			return notFound(err)
		}
		party, other := t.Requester, t.Target
		if byTarget {
			party, other = t.Target, t.Requester
		}
		if party != actor.AgentID {
			return pircan.ErrNotFound
		}
		if t.State != pircan.TaskOpen {
			return pircan.ErrNotPending
		}
		if err := change(ctx, q); err != nil {
			return err
		}
		if err := notify(ctx, q, other, pircan.NotifyTaskUpdate); err != nil {
			return err
		}
		out, err = taskOf(ctx, q, actor.AgentID, id)
		return err
	})
	return out, err
}

func taskOf(ctx context.Context, q *db.Queries, agentID, id string) (pircan.Task, error) {
	if !pircan.ValidID(id) {
		return pircan.Task{}, pircan.ErrNotFound
	}
	r, err := q.TaskOf(ctx, db.TaskOfParams{ID: id, Agent: agentID})
	if err != nil {
		return pircan.Task{}, notFound(err)
	}
	return task(r), nil
}

func task(r db.TaskOfRow) pircan.Task {
	t := pircan.Task{ID: r.ID, Skill: r.Skill, From: pircan.PartyRef{AgentID: r.Requester, Name: r.RequesterName},
		To: pircan.PartyRef{AgentID: r.Target, Name: r.TargetName}, AgreementID: r.AgreementID, At: r.CreatedAt,
		State: r.State, Text: r.Text}
	if r.Answer != nil {
		t.Answer = *r.Answer
	}
	if r.AnsweredAt.Valid {
		t.AnsweredAt = r.AnsweredAt.Time
	}
	return t
}

// orNil is an optional filter's value: nil when not given ("").
func orNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
