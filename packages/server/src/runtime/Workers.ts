/**
 * Every background worker of `herald serve`, each one named layer built with
 * the supervision helper (`Worker.loop` / `Worker.periodic`) around one pass or
 * one iteration that its service exposes. Services fork nothing; only
 * `runtime/Server.ts` composes `WorkersLayer`, so `herald admin …` and
 * `herald migrate` (which build capabilities without it) start no worker.
 *
 * To add a worker: define it below in its capability's section and list it in
 * `WorkersLayer`.
 */
import { Effect, Layer } from "effect"
import { Credentials } from "../auth/Credentials.ts"
import { EmailSignIn } from "../auth/EmailSignIn.ts"
import { SignInSweep } from "../auth/SignInSweep.ts"
import { RateLimiter } from "../billing/RateLimiter.ts"
import { AddressThrottle } from "../http/AddressThrottle.ts"
import { Readiness } from "../http/Ops.ts"
import { Idempotency } from "../idempotency/Idempotency.ts"
import { ProcessMetrics } from "../observability/ProcessMetrics.ts"
import { Outbox } from "../push/Outbox.ts"
import { Deliveries, SWEEP_INTERVAL } from "../webhooks/Deliveries.ts"
import { Interactions } from "../interactions/Interactions.ts"
import { PromptWakeups } from "../interactions/Wakeups.ts"
import { InboxSignals } from "../inbox/InboxSignals.ts"
import { InboxWrites } from "../inbox/InboxWrites.ts"
import { LiveActivities } from "../activities/LiveActivities.ts"
import { SWEEP_INTERVAL as ACTIVITY_SWEEP_INTERVAL } from "../activities/Sweeper.ts"
import { AuditRetention } from "../teams/AuditRetention.ts"
import { Pages } from "../oncall/Pages.ts"
import { ConnectorWatch } from "../watch/ConnectorWatch.ts"
import { WatchSettings } from "../watch/WatchSettings.ts"
import { OAuthSweep } from "../oauth/Sweep.ts"
import { McpSessions } from "../mcp/McpSessions.ts"
import { TableMaintenance } from "../db/TableMaintenance.ts"
import { QuietGate } from "../quiet/QuietGate.ts"
import { Summaries as QuietSummaries } from "../quiet/Summaries.ts"
import { MailOutbox } from "../email/MailOutbox.ts"
import * as Worker from "./Worker.ts"

// ── push (outbox drain, node heartbeat) ─────────────────────────────────────

/**
 * The push outbox's workers: this node's heartbeat (so its claims are never
 * taken from it) and the drain loop, which does not run while delivery is
 * paused (pushes are queued, none sent).
 */
export const OutboxWorkers = Layer.unwrap(Effect.map(Outbox, (outbox) =>
  Layer.mergeAll(
    Worker.periodic("push-outbox-heartbeat", outbox.heartbeatEvery, outbox.heartbeat),
    outbox.paused
      ? Layer.effectDiscard(Effect.logWarning("push delivery is paused (HERALD_PUSH_PAUSED): pushes are queued, none are sent"))
      : Worker.loop("push-outbox-drain", outbox.drain)
  )))

/**
 * Quiet hours (quiet/): the settings listener, one connection's life per run
 * (PostgreSQL only: other processes' changes reach this process's cache), and
 * the summaries of held pushes, a pass every few seconds or when woken.
 */
export const QuietWorkers = Layer.unwrap(Effect.gen(function*() {
  const gate = yield* QuietGate
  const summaries = yield* QuietSummaries
  return Layer.mergeAll(
    gate.enabled ? Worker.loop("quiet-hours-listener", gate.listen) : Layer.empty,
    Worker.loop("quiet-hours-summaries", summaries.loop)
  )
}))

// ── e-mail channel (mail outbox) ─────────────────────────────────────────────

/** The e-mail channel's outbox: due mails sent, woken after they are queued, else polling (email/MailOutbox.ts). */
export const MailWorkers = Layer.unwrap(Effect.map(MailOutbox, (outbox) => Worker.loop("mail-outbox", outbox.drain)))

// ── auth (revocation poll, lastUsedAt flush) ────────────────────────────────

/** The credential cache's workers, at the intervals its options set. */
export const CredentialsWorkers = Layer.unwrap(Effect.map(Credentials, (credentials) =>
  Layer.mergeAll(
    Worker.periodic("credential-revocation-poll", credentials.options.revocationPollInterval, credentials.pollRevocations),
    Worker.periodic("credential-last-used-flush", credentials.options.flushInterval, credentials.flushDue)
  )))

/**
 * Sign-in: the mail of requested links, sent after the answer (auth/EmailSignIn.ts), and the sweep of
 * expired WebAuthn challenges and closed e-mail windows.
 */
export const SignInWorkers = Layer.unwrap(Effect.gen(function*() {
  const email = yield* EmailSignIn
  const sweep = yield* SignInSweep
  return Layer.mergeAll(
    Worker.loop("sign-in-mail", email.deliver),
    Worker.periodic("sign-in-sweep", sweep.every, Effect.asVoid(sweep.sweep))
  )
}))

// ── billing, idempotency, observability, ops ────────────────────────────────

const RateLimiterSweep = Layer.unwrap(Effect.map(RateLimiter, (limiter) =>
  Worker.periodic("rate-limit-sweep", limiter.sweepEvery, limiter.sweep)))

/** The per-address limits (http/AddressThrottle.ts): memory follows the addresses active in the last minute. */
const AddressThrottleSweep = Layer.unwrap(Effect.map(AddressThrottle, (throttle) =>
  Worker.periodic("address-limit-sweep", throttle.sweepEvery, throttle.sweepNow)))

const IdempotencyPurge = Layer.unwrap(Effect.map(Idempotency, (idempotency) =>
  Worker.periodic("idempotency-purge", idempotency.purgeEvery, idempotency.purge)))

/** Event-loop, GC and memory gauges; the sampler exists only for this worker. */
const ProcessMetricsSampler = Layer.unwrap(Effect.map(ProcessMetrics, (metrics) =>
  Worker.periodic("process-metrics", metrics.every, metrics.sample))).pipe(Layer.provide(ProcessMetrics.layer))

/** `herald_db_up` holds without anyone calling `/readyz`: the process probes itself. */
const ReadinessSelfProbe = Layer.unwrap(Effect.map(Readiness, (readiness) =>
  Worker.periodic("readiness-self-probe", readiness.every, Effect.asVoid(readiness.probe)))).pipe(Layer.provide(Readiness.layer))

// ── interactions (prompt wake-up listener, prompt expiry rescheduling) ──────

/**
 * Prompts: the wake-up listener, one connection's life per run (PostgreSQL
 * only: on the embedded database one process sees all changes itself), and
 * the expiry timers of pending prompts left without one, stored once at
 * start (again after a backoff until that succeeds, then idle).
 */
export const PromptWorkers = Layer.unwrap(Effect.gen(function*() {
  const wakeups = yield* PromptWakeups
  const interactions = yield* Interactions
  return Layer.mergeAll(
    wakeups.enabled ? Worker.loop("prompt-wakeups", wakeups.listen) : Layer.empty,
    Worker.once("prompt-deadlines", interactions.rescheduleDeadlines)
  )
}))

// ── inbox (change listener and forwarder) ───────────────────────────────────

/**
 * Inbox changes across processes (PostgreSQL only; inbox/InboxSignals.ts):
 * the listener, one connection's life per run, hands the other processes'
 * changes to this process's open inbox streams; the forwarder sends this
 * process's committed changes to them, a NOTIFY statement at a time.
 */
export const InboxWorkers = Layer.unwrap(Effect.gen(function*() {
  const signals = yield* InboxSignals
  const writes = yield* InboxWrites
  return signals.enabled
    ? Layer.mergeAll(Worker.loop("inbox-signals", signals.listen), Worker.loop("inbox-forward", writes.forward))
    : Layer.empty
}))

// ── activities (sweeper, expiry rescheduling) ───────────────────────────────

/**
 * Live activities: the sweep (claims of dead processes given up, work left
 * due handed to its actors) every couple of seconds, and the expiry timers a
 * crash left unstored, stored once at start (again after a backoff until that
 * succeeds, then idle). Each actor's own wake-ups are its clock, not workers.
 */
export const ActivityWorkers = Layer.unwrap(Effect.map(LiveActivities, (activities) =>
  Layer.mergeAll(
    Worker.periodic("live-activity-sweep", ACTIVITY_SWEEP_INTERVAL, activities.sweep),
    Worker.once("live-activity-deadlines", activities.rescheduleExpiries)
  )))

// ── on-call (escalation timers rescheduling) ───────────────────────────────

/**
 * Pages: the step timers of triggered pages a crash left unstored (between a
 * page's commit and its timers), stored once at start; a timer already stored
 * is left as it is (one per step).
 */
export const PageWorkers = Layer.unwrap(Effect.map(Pages, (pages) =>
  Worker.once("page-deadlines", pages.rescheduleDeadlines)))

/**
 * The dead-man's switch: the timer of every watched service a crash left
 * unstored (between a watch's save and its timer, or a delivery ending a
 * silence and its check); each is keyed by its due time, so one stored is left.
 */
export const WatchWorkers = Layer.unwrap(Effect.gen(function*() {
  const services = yield* WatchSettings
  const connectors = yield* ConnectorWatch
  return Worker.once("watch-deadlines", Effect.andThen(services.rearmAll, connectors.rearmAll))
}))

// ── webhooks (delivery worker) ──────────────────────────────────────────────

/**
 * Reply-webhook deliveries: the drain loop (woken after a commit by
 * `Deliveries.wake`, else polling; its attempts run on child fibers, so they
 * end with it) and the sweeper that logs attempts a dead node cut short.
 */
export const DeliveriesWorkers = Layer.unwrap(Effect.map(Deliveries, (deliveries) =>
  Layer.mergeAll(
    Worker.loop("reply-webhook-deliveries", deliveries.drain),
    Worker.periodic("reply-webhook-interrupted-attempts", SWEEP_INTERVAL, deliveries.closeInterrupted)
  )))

// ── teams (audit retention) ─────────────────────────────────────────────────

/** Deletes audit entries older than their team's `retentionDays`, in bounded batches. */
export const TeamRetentionSweep = Layer.unwrap(Effect.map(AuditRetention, (retention) =>
  Worker.periodic("team-retention-sweep", retention.sweepEvery, Effect.asVoid(retention.sweep))))

// ── oauth (sweep) ─────────────────────────────────────────────────────────────

/** Unclaimed registered clients, expired codes, access and refresh tokens, spent sign-in links. */
export const OAuthSweepWorker = Layer.unwrap(Effect.map(OAuthSweep, (sweep) =>
  Worker.periodic("oauth-sweep", sweep.every, Effect.asVoid(sweep.sweep))))

// ── mcp (session sweep) ─────────────────────────────────────────────────────

/** MCP sessions unused for 30 minutes, and those of revoked tokens, ended (mcp/McpSessions.ts). */
export const McpSessionSweep = Layer.unwrap(Effect.map(McpSessions, (sessions) =>
  Worker.periodic("mcp-session-sweep", sessions.every, Effect.asVoid(sessions.sweep))))

// ── db (table maintenance) ───────────────────────────────────────────────────

/**
 * VACUUM / ANALYZE of the queue tables past their dead-row thresholds
 * (db/TableMaintenance.ts): the embedded database has no autovacuum, and a
 * PostgreSQL may run without it. Off when its interval is 0.
 */
export const TableMaintenanceWorker = Layer.unwrap(Effect.map(TableMaintenance, (maintenance) =>
  maintenance.enabled
    ? Worker.periodic("table-maintenance", maintenance.every, Effect.asVoid(maintenance.pass()))
    : Layer.empty)).pipe(Layer.provide(TableMaintenance.layer))

/** All workers, merged; composed beside the routes in `runtime/Server.ts`. */
export const WorkersLayer = Layer.mergeAll(
  // push
  OutboxWorkers,
  QuietWorkers,
  MailWorkers,
  // auth
  CredentialsWorkers,
  SignInWorkers,
  // billing, idempotency, observability, ops
  RateLimiterSweep,
  AddressThrottleSweep,
  IdempotencyPurge,
  ProcessMetricsSampler,
  ReadinessSelfProbe,
  // interactions
  PromptWorkers,
  // inbox
  InboxWorkers,
  // activities
  ActivityWorkers,
  // on-call
  PageWorkers,
  WatchWorkers,
  // webhooks
  DeliveriesWorkers,
  // teams
  TeamRetentionSweep,
  // oauth
  OAuthSweepWorker,
  // mcp
  McpSessionSweep,
  // db
  TableMaintenanceWorker
)
