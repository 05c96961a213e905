package store

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/creatimus/pircan/store/db"
)

// A pipe is a transaction whose statements go to the server in batches
// (pgx's pipeline mode): one network round trip a batch instead of one a
// statement. Its BEGIN goes with its first batch and its COMMIT with its
// last, so a write whose reads can all be sent at once costs two round
// trips: the reads (and the locks they take), then, once the core has
// decided from what they read, the writes with the commit.
//
// Statements are queued as steps. A step calls the sqlc-generated queries
// and runs twice: when queued, to record its statements into the batch
// (every result is then errQueued, and discarded), and once the batch is
// sent, again over the batch's results in order, so that the generated
// code scans them; a step keeps what it read in its closure's variables.
// A step must therefore make the same calls both times: its statements may
// not depend on each other's results (a later step's may not either, in
// one batch: its arguments are taken when it is queued).
//
// Locks and counts stay as exact as with a statement a round trip: the
// server runs a batch's statements one after another in the transaction,
// each with its own snapshot, as it would run them sent one by one; only
// the waits for the network between them are gone. A failing statement
// ends its batch: the server skips the rest of it, COMMIT included, and
// the transaction is rolled back (withPipe). What the client finds wrong
// in the results of the batch that carries COMMIT (a step that does not
// repeat its statements, a result that does not scan) is found after the
// server committed: those are the code's mistakes, never the data's, and
// its tests meet them; the last batch should hold writes, whose results
// decide nothing.
type pipe struct {
	conn  *pgxpool.Conn
	batch *pgx.Batch // nil: nothing queued
	steps []pipeStep
	begun bool // BEGIN has been sent
	done  bool // COMMIT is queued
}

type pipeStep struct {
	run  func(q *db.Queries) error
	sqls []string // the statements it recorded, in order
}

// errQueued is every result a step sees while it is recorded.
var errQueued = errors.New("store: statement queued, not sent yet")

// errPipeOrder is a step that did not make, over the results, the calls it
// made when recorded: its results cannot be matched to its statements.
var errPipeOrder = errors.New("store: a pipelined step's statements changed between recording and results")

// withPipe runs fn in one pipelined transaction under the query timeout,
// as withTx does: fn queues steps and sends them (send, run); what is
// queued when it returns is sent with the COMMIT. On any failure the
// transaction is rolled back (on a fresh, bounded context, as withTx).
func (s *Store) withPipe(ctx context.Context, fn func(ctx context.Context, p *pipe) error) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	defer func() {
		if pc := conn.Conn().PgConn(); !pc.IsClosed() && pc.TxStatus() != 'I' {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
			defer cancel()
			_, _ = conn.Exec(rctx, "rollback")
		}
	}()
	p := &pipe{conn: conn}
	if err := fn(ctx, p); err != nil {
		return err
	}
	p.done = true
	return p.send(ctx)
}

// queue records step's statements into the next batch.
func (p *pipe) queue(step func(q *db.Queries) error) {
	r := &recorder{batch: p.next()}
	_ = step(db.New(r))
	p.steps = append(p.steps, pipeStep{run: step, sqls: r.sqls})
}

// send sends the batch (BEGIN first, the first time; COMMIT last, the last
// time) in one round trip and runs every step over its results. It returns
// the first failure: the connection's, a statement's (a QueryRow that
// finds no row is none: the step sees pgx.ErrNoRows), or a step's own.
func (p *pipe) send(ctx context.Context) error {
	switch {
	case p.done && !p.begun && p.batch == nil:
		return nil // nothing was ever queued: nothing to commit
	case p.done:
		p.next().Queue("commit")
	case p.batch == nil && p.begun:
		return nil
	}
	b, steps := p.next(), p.steps
	p.batch, p.steps = nil, nil
	br := p.conn.SendBatch(ctx, b)
	var failed error
	if !p.begun {
		p.begun = true
		_, failed = br.Exec()
	}
	for _, st := range steps {
		if failed != nil {
			break
		}
		r := &replayer{br: br, sqls: st.sqls}
		err := st.run(db.New(r))
		switch {
		case r.err != nil:
			failed = r.err
		case err != nil:
			failed = err
		case len(r.sqls) > 0:
			failed = errPipeOrder
		}
	}
	if failed == nil && p.done {
		// COMMIT in a transaction that failed is a ROLLBACK, and no error.
		if tag, err := br.Exec(); err != nil {
			failed = err
		} else if tag.String() != "COMMIT" {
			failed = pgx.ErrTxCommitRollback
		}
	}
	if err := br.Close(); failed == nil {
		failed = err
	}
	return failed
}

// next is the batch being queued, begun with BEGIN before the first send.
func (p *pipe) next() *pgx.Batch {
	if p.batch == nil {
		p.batch = &pgx.Batch{}
		if !p.begun {
			p.batch.Queue("begin")
		}
	}
	return p.batch
}

// run sends what is queued, then runs fn's statements in the transaction
// one round trip each: for work whose statements depend on each other's
// results.
func (p *pipe) run(ctx context.Context, fn func(q *db.Queries) error) error {
	if err := p.send(ctx); err != nil {
		return err
	}
	return fn(db.New(p.conn))
}

// recorder is the connection a step records its statements on.
type recorder struct {
	batch *pgx.Batch
	sqls  []string
}

func (r *recorder) add(sql string, args []any) {
	r.batch.Queue(sql, args...)
	r.sqls = append(r.sqls, sql)
}

func (r *recorder) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	r.add(sql, args)
	return pgconn.CommandTag{}, errQueued
}

func (r *recorder) Query(_ context.Context, sql string, args ...any) (pgx.Rows, error) {
	r.add(sql, args)
	return nil, errQueued
}

func (r *recorder) QueryRow(_ context.Context, sql string, args ...any) pgx.Row {
	r.add(sql, args)
	return errorRow{errQueued}
}

// replayer is the connection a step reads its results on, in the order
// it recorded its statements; err is the first failure it saw.
type replayer struct {
	br   pgx.BatchResults
	sqls []string
	err  error
}

// next checks that sql is the statement whose results come next.
func (r *replayer) next(sql string) error {
	if len(r.sqls) == 0 || r.sqls[0] != sql {
		return r.fail(errPipeOrder)
	}
	r.sqls = r.sqls[1:]
	return nil
}

// fail keeps the first failure: any error but a QueryRow's no rows.
func (r *replayer) fail(err error) error {
	if err != nil && r.err == nil && !errors.Is(err, pgx.ErrNoRows) {
		r.err = err
	}
	return err
}

func (r *replayer) Exec(_ context.Context, sql string, _ ...any) (pgconn.CommandTag, error) {
	if err := r.next(sql); err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := r.br.Exec()
	return tag, r.fail(err)
}

func (r *replayer) Query(_ context.Context, sql string, _ ...any) (pgx.Rows, error) {
	if err := r.next(sql); err != nil {
		return nil, err
	}
	rows, err := r.br.Query()
	if err != nil {
		return nil, r.fail(err)
	}
	return replayedRows{rows, r}, nil
}

func (r *replayer) QueryRow(_ context.Context, sql string, _ ...any) pgx.Row {
	if err := r.next(sql); err != nil {
		return errorRow{err}
	}
	return replayedRow{r.br.QueryRow(), r}
}

type replayedRow struct {
	row pgx.Row
	r   *replayer
}

func (w replayedRow) Scan(dest ...any) error { return w.r.fail(w.row.Scan(dest...)) }

type replayedRows struct {
	pgx.Rows
	r *replayer
}

func (w replayedRows) Err() error { return w.r.fail(w.Rows.Err()) }

type errorRow struct{ err error }

func (e errorRow) Scan(...any) error { return e.err }

// tripCounter counts the store's round trips to the server: a statement
// sent alone, a batch, a statement prepared alone (the first use of a
// statement on a connection). It is the pool's tracer.
type tripCounter struct{ n atomic.Int64 }

func (t *tripCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	t.n.Add(1)
	return ctx
}

func (t *tripCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (t *tripCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	t.n.Add(1)
	return ctx
}

func (t *tripCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (t *tripCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func (t *tripCounter) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	t.n.Add(1)
	return ctx
}

func (t *tripCounter) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

// RoundTrips is how many round trips the store has made to the server
// (statements sent alone, batches, statements prepared): the benchmarks'
// trips per operation.
func (s *Store) RoundTrips() int64 { return s.trips.n.Load() }
