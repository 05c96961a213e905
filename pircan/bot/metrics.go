package bot

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/creatimus/pircan/pircan"
	"github.com/creatimus/pircan/pircan/a2a"
	"github.com/creatimus/pircan/pircan/irc"
	"github.com/creatimus/pircan/pircan/irc/transport"
	"github.com/creatimus/pircan/pircan/mcp"
	"github.com/creatimus/pircan/pircan/parley"
)

// notifyBacklogCap bounds the scrape-time count of waiting notifications:
// past it the gauge says "at least this many", and the query stays cheap.
const notifyBacklogCap = 10000

// scrapeTimeout bounds the database work of one scrape.
const scrapeTimeout = time.Second

// opsState is what the operator face (http.go) keeps in a Bot: the
// metrics, made on first use, and where ServeHTTP listens. Each bot has its
// own registry (never the global one), so several bots in one process, as
// in tests, do not clash.
type opsState struct {
	once        sync.Once
	metrics     *metrics
	httpAddr    atomic.Pointer[string]
	metricsAddr atomic.Pointer[string]
	mcpOnce     sync.Once
	mcp         *mcp.Face // the MCP face (http.go)
	a2aOnce     sync.Once
	a2a         *a2a.Face // the A2A face (http.go)
	parleyOnce  sync.Once
	parley      *parley.Face // the Parley forum face (http.go)
}

type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	trips    prometheus.Counter
	// Flood controls (issue 8): what was refused, so a flood shows.
	refused        *prometheus.CounterVec
	welcomes       *prometheus.CounterVec
	presenceResets prometheus.Counter
}

// metrics returns the bot's metrics, registering them on first use.
func (b *Bot) metrics() *metrics {
	b.ops.once.Do(func() { b.ops.metrics = newMetrics(b) })
	return b.ops.metrics
}

func newMetrics(b *Bot) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pircan_requests_total",
			Help: `Requests by verb ("unknown": not in the verb table; "none": no verb read; "help": plain help) and result code ("ok", the spec's error code, or "rate_limited_silent" when dropped without a reply).`,
		}, []string{"verb", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pircan_request_seconds",
			Help:    "Time from the transport reading a request to its replies being queued for sending (output pacing not included); dropped requests are not observed.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"verb"}),
		trips: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pircan_rate_limit_trips_total",
			Help: "Times a caller went over the per-minute request limit: answered rate_limited once, then dropped silently until the window passes.",
		}),
	}
	m.refused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pircan_requests_refused_total",
		Help: `Requests refused before they were read, by class ("identified", "unidentified") and reason ("sender_queue": the sender already had as many waiting as PIRCAN queues, answered rate_limited once for an identified sender; "unidentified_queue": unidentified requests were at their shared bound, dropped).`,
	}, []string{"class", "reason"})
	m.welcomes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pircan_lobby_welcomes_total",
		Help: `Lobby joins by outcome: "sent" (welcomed), "repeat" (that nick was welcomed within the hour), "refused" (over the connection's or the network's welcome budget, or the table of welcomed nicks is full).`,
	}, []string{"result"})
	m.presenceResets = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "pircan_presence_resets_total",
		Help: "Times membership events were dropped for a full queue, so presence was forgotten and asked again by WHO.",
	})
	m.reg.MustRegister(m.requests, m.latency, m.trips, m.refused, m.welcomes, m.presenceResets, &scrapeCollector{b: b},
		&featureCollector{b: b}, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// handleRequest runs one request through the core and counts it.
func (b *Bot) handleRequest(ctx context.Context, ev transport.Event) []irc.Reply {
	received := ev.Received
	if received.IsZero() {
		received = time.Now()
	}
	replies, out := b.irc.Handle(ctx, ev.Sender, ev.Text)
	b.metrics().request(out, time.Since(received))
	return replies
}

func (m *metrics) request(out irc.Outcome, took time.Duration) {
	code := "ok"
	switch {
	case out.Silent:
		code = "rate_limited_silent"
	case out.Code != "":
		code = string(out.Code)
	}
	m.requests.WithLabelValues(out.Verb, code).Inc()
	if out.Limited && !out.Silent {
		m.trips.Inc()
	}
	if !out.Silent {
		m.latency.WithLabelValues(out.Verb).Observe(took.Seconds())
	}
}

// scrapeCollector reads, at scrape time, what other parts already count:
// the transport, the pacer, the pool, and the notification backlog.
type scrapeCollector struct{ b *Bot }

// desc describes a metric of this collector, with its variable labels.
func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

var (
	descIRCConnected   = desc("pircan_irc_connected", "1 while the bot is registered on IRC (account-tag granted) and serving.")
	descIRCReconnects  = desc("pircan_irc_reconnects_total", "IRC connections after the first.")
	descEventsQueued   = desc("pircan_irc_events_queued", "Events read from IRC and not yet taken by the bot, by lane (priority: identified requests; membership; unidentified: requests without an account).", "lane")
	descEventsDropped  = desc("pircan_irc_events_dropped_total", "Events dropped because their lane was full (priority: only after the bot took nothing for 10 s; membership: presence is then reset).", "lane")
	descIntakeWaits    = desc("pircan_irc_intake_waits_total", "Times the IRC reader waited for room in the priority lane rather than drop an identified request.")
	descDispatchQueued = desc("pircan_dispatch_queued", "Requests waiting for or on a request worker, by class (identified, unidentified).", "class")
	descNotifyQueued   = desc("pircan_notify_jobs_queued", "Notification jobs (sightings, deliveries) waiting for the notification workers.")
	descNotifyRefused  = desc("pircan_notify_jobs_refused_total", "Notification jobs refused because the notification workers' queue was full; the notifications wait in the database for the agent's next wake.")
	descOutputQueue    = desc("pircan_output_queue_lines", "Reply lines waiting in the output pacer.")
	descOutputSent     = desc("pircan_output_lines_total", "Lines sent to IRC by the output pacer.")
	descOutputDropped  = desc("pircan_output_dropped_lines_total", "Reply lines dropped because a recipient's queue was full.")
	descOutputCapRate  = desc("pircan_output_cap_lines_per_second", "Global output cap in force: the configured one while the server grants a fake-lag exemption (OPER), the ordinary-client one otherwise, halved after each flood disconnect.")
	descOutputCapBurst = desc("pircan_output_cap_burst", "Lines the global output cap lets out at once.")
	descOutputDelay    = desc("pircan_output_queue_delay_seconds", "How long a reply queued now waits behind the lines already queued, at the global output cap in force (lines waiting / lines per second).")
	descOutputExempt   = desc("pircan_output_exempt", "1 while the configured output cap is in force (OPER granted, or PIRCAN_OUTPUT_EXEMPT / PIRCAN_OUTPUT_RATE stated), 0 while the ordinary-client cap is.")
	descOutputDeparted = desc("pircan_output_departed_lines_total", "Reply lines not sent because their account left the nick before they could be written.")
	descStandby        = desc("pircan_standby", "1 while this process stands by (another holds the leader lock).")
	descDatabaseUp     = desc("pircan_database_up", "1 when the scrape's backlog query succeeded.")
	descNotifyWaiting  = desc("pircan_notify_waiting", "Notifications waiting for delivery (last "+pircan.Span(pircan.NotificationLifetime)+"), counted up to 10000.")
	descPoolAcquired   = desc("pircan_db_pool_acquired_conns", "Database connections in use.")
	descPoolIdle       = desc("pircan_db_pool_idle_conns", "Idle database connections.")
	descPoolTotal      = desc("pircan_db_pool_total_conns", "Database connections open (in use, idle or being opened).")
	descPoolMax        = desc("pircan_db_pool_max_conns", "Largest pool size allowed.")
	descPoolAcquires   = desc("pircan_db_pool_acquires_total", "Connections taken from the pool.")
	descPoolAcquireSec = desc("pircan_db_pool_acquire_seconds_total", "Time spent taking connections from the pool.")
	descPoolEmpty      = desc("pircan_db_pool_empty_acquires_total", "Acquires that waited because no idle connection was ready.")
	descPoolCanceled   = desc("pircan_db_pool_canceled_acquires_total", "Acquires given up because their context ended.")
	descAgentCacheHits = desc("pircan_agent_cache_hits_total", "Requests whose caller's agent was read from memory (store/agentcache.go).")
	descAgentCacheMiss = desc("pircan_agent_cache_misses_total", "Requests whose caller's agent was read from the database.")
	descTokenCacheHits = desc("pircan_token_cache_hits_total", "Bearer token checks answered from memory (store/tokencache.go).")
	descTokenCacheMiss = desc("pircan_token_cache_misses_total", "Bearer token checks that read the database.")
	descRightsHits     = desc("pircan_rights_cache_hits_total", "Forum rights of an account answered from memory (store/rightscache.go).")
	descRightsMiss     = desc("pircan_rights_cache_misses_total", "Forum rights of an account read from the database.")
	descDBRoundTrips   = desc("pircan_db_round_trips_total", "Round trips to Postgres: statements sent alone, batches (a pipelined transaction's reads, its writes with the commit; store/pipe.go), statements prepared.")
	descFindCounts     = desc("pircan_find_text_counts_total", "FIND totals for a text (q), by how they were counted: sample (the first look saw every candidate), walk (agents in registration order), index (the GIN index) (store/find.go).", "way")
)

func (c *scrapeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descIRCConnected, descIRCReconnects, descEventsQueued, descEventsDropped,
		descIntakeWaits, descDispatchQueued, descNotifyQueued, descNotifyRefused,
		descOutputQueue, descOutputSent, descOutputDropped, descOutputDeparted, descOutputCapRate, descOutputCapBurst, descOutputDelay, descOutputExempt, descStandby, descDatabaseUp, descNotifyWaiting,
		descPoolAcquired, descPoolIdle, descPoolTotal, descPoolMax, descPoolAcquires, descPoolAcquireSec,
		descPoolEmpty, descPoolCanceled, descAgentCacheHits, descAgentCacheMiss, descTokenCacheHits, descTokenCacheMiss, descRightsHits, descRightsMiss, descDBRoundTrips, descFindCounts} {
		ch <- d
	}
}

func (c *scrapeCollector) Collect(ch chan<- prometheus.Metric) {
	b := c.b
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}

	gauge(descIRCConnected, bool01(b.conn.Online()))
	counter(descIRCReconnects, float64(b.conn.Reconnects()))
	for _, l := range b.conn.Lanes() {
		ch <- prometheus.MustNewConstMetric(descEventsQueued, prometheus.GaugeValue, float64(l.Queued), l.Lane.String())
		ch <- prometheus.MustNewConstMetric(descEventsDropped, prometheus.CounterValue, float64(l.Dropped), l.Lane.String())
	}
	counter(descIntakeWaits, float64(b.conn.PriorityWaits()))
	ids, guests := b.jobs.queued()
	ch <- prometheus.MustNewConstMetric(descDispatchQueued, prometheus.GaugeValue, float64(ids), "identified")
	ch <- prometheus.MustNewConstMetric(descDispatchQueued, prometheus.GaugeValue, float64(guests), "unidentified")
	gauge(descNotifyQueued, float64(len(b.notes.work)))
	counter(descNotifyRefused, float64(b.notes.refused.Load()))
	queued, dropped := b.conn.Pacer().Stats()
	gauge(descOutputQueue, float64(queued))
	counter(descOutputSent, float64(b.conn.Pacer().Sent()))
	counter(descOutputDropped, float64(dropped))
	oc := b.conn.OutputCap()
	gauge(descOutputCapRate, oc.PerSecond)
	gauge(descOutputCapBurst, float64(oc.Burst))
	gauge(descOutputDelay, float64(queued)/oc.PerSecond)
	gauge(descOutputExempt, bool01(b.conn.OutputExempt()))
	counter(descOutputDeparted, float64(b.conn.Pacer().Departed()))
	gauge(descStandby, bool01(b.standby.Load()))

	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	waiting, err := b.store.WaitingNotifications(ctx, notifyBacklogCap)
	gauge(descDatabaseUp, bool01(err == nil))
	if err == nil {
		gauge(descNotifyWaiting, float64(waiting))
	} else {
		b.log.Debug().Err(err).Msg("metrics: notification backlog not counted")
	}

	p := b.store.PoolStats()
	gauge(descPoolAcquired, float64(p.Acquired))
	gauge(descPoolIdle, float64(p.Idle))
	gauge(descPoolTotal, float64(p.Total))
	gauge(descPoolMax, float64(p.Max))
	counter(descPoolAcquires, float64(p.AcquireCount))
	counter(descPoolAcquireSec, p.AcquireDuration.Seconds())
	counter(descPoolEmpty, float64(p.EmptyAcquireCount))
	counter(descPoolCanceled, float64(p.CanceledAcquireCount))
	hits, misses := b.store.AgentCacheStats()
	counter(descAgentCacheHits, float64(hits))
	counter(descAgentCacheMiss, float64(misses))
	hits, misses = b.store.TokenCacheStats()
	counter(descTokenCacheHits, float64(hits))
	counter(descTokenCacheMiss, float64(misses))
	hits, misses = b.store.RightsCacheStats()
	counter(descRightsHits, float64(hits))
	counter(descRightsMiss, float64(misses))
	counter(descDBRoundTrips, float64(b.store.RoundTrips()))
	fc := b.store.FindCountStats()
	for way, n := range map[string]uint64{"sample": fc.Sample, "walk": fc.Walk, "index": fc.Index} {
		ch <- prometheus.MustNewConstMetric(descFindCounts, prometheus.CounterValue, float64(n), way)
	}
}

func bool01(v bool) float64 {
	if v {
		return 1
	}
	return 0
}
