/**
 * Who hears of inbox changes: the person's open inbox streams (GET
 * /api/app/inbox/stream). A change reaches this process's streams once it is
 * committed (`changed`, run after the commit by InboxWrites). On PostgreSQL
 * the other processes hear of it too: the change is queued here, and a worker
 * (`outgoing`, InboxWrites.forward) sends what has queued up as one `NOTIFY
 * herald_inbox` statement of its own; each process listens (`listen`, a
 * worker) and hands the others' changes to its streams, skipping its own when
 * they come back. On the embedded database there is one process and nothing
 * to tell.
 *
 * Why not NOTIFY inside the writing transaction: PostgreSQL serializes the
 * commits of every transaction that sent one (a database-wide lock held
 * through the commit's flush), and inbox items are written by every sent
 * notification. Measured on this code, 800 notifications at concurrency 32
 * took 2.4–4.5 s with the NOTIFY in their statement and 0.9–1.7 s without.
 * Sent after the commit, from one statement at a time per process, the
 * signals cost the sends nothing; a crash between a commit and its NOTIFY
 * loses only a hint.
 *
 * A signal says only which item changed; a stream that misses one (a slow
 * reader's queue is bounded, so is the queue to the other processes) loses
 * nothing a fresh read of the inbox does not give back.
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Option, Queue } from "effect"
import type { Scope } from "effect"
import { randomBytes } from "node:crypto"
import { INBOX_CHANNEL } from "./InboxRepo.ts"

/** Changes a stream may fall behind by before the oldest are dropped. */
const STREAM_BACKLOG = 256
/** Changes waiting for the other processes, and the most one NOTIFY statement sends. */
const OUTGOING_BACKLOG = 10_000
const OUTGOING_BATCH = 500

/** One item of one person's inbox was created or changed state; `ref` is its inbox id (`notification:anot_…`). */
export interface InboxChange {
  readonly userId: string
  readonly ref: string
}

export class InboxSignals extends Context.Service<InboxSignals, {
  /** Whether changes cross processes: false on the embedded database (one process). */
  readonly enabled: boolean
  /** Committed changes: this process's streams of their people hear of them, and (PostgreSQL) the other processes next. */
  readonly changed: (changes: ReadonlyArray<InboxChange>) => Effect.Effect<void>
  /** The next NOTIFY payloads for the other processes, at least one (waits for them). */
  readonly outgoing: Effect.Effect<ReadonlyArray<string>>
  /**
   * The person's changes from now on (their inbox ids), for the life of the
   * scope; none when the person already holds `max` streams on this process.
   */
  readonly subscribe: (userId: string, max: number) => Effect.Effect<Option.Option<Queue.Dequeue<string>>, never, Scope.Scope>
  /** How many streams the person holds open on this process. */
  readonly open: (userId: string) => number
  /** Listens for the other processes' changes and hands them to the streams here; ends only when the connection fails. */
  readonly listen: Effect.Effect<void, unknown>
}>()("herald/InboxSignals") {
  static readonly layer = Layer.effect(InboxSignals, Effect.gen(function*() {
    const pg = yield* PgClient.PgClient
    // The embedded database is served on a local socket (db/Embedded.ts): one process.
    const enabled = pg.config.path === undefined
    const origin = `${randomBytes(6).toString("hex")}:`
    const streams = new Map<string, Set<Queue.Queue<string>>>()
    const toOthers = yield* Queue.sliding<string>(OUTGOING_BACKLOG)

    const publish = (changes: ReadonlyArray<InboxChange>) => {
      for (const { ref, userId } of changes) {
        const queues = streams.get(userId)
        if (queues === undefined) continue
        for (const queue of queues) Queue.offerUnsafe(queue, ref)
      }
    }

    const changed = (changes: ReadonlyArray<InboxChange>) =>
      Effect.sync(() => {
        publish(changes)
        // `<origin><userId> <ref>`: the sender, so a process skips its own changes when they come back.
        if (enabled) for (const { ref, userId } of changes) Queue.offerUnsafe(toOthers, `${origin}${userId} ${ref}`)
      })

    const subscribe = (userId: string, max: number) =>
      Effect.acquireRelease(
        Effect.gen(function*() {
          const queues = streams.get(userId) ?? new Set()
          if (queues.size >= max) return Option.none<Queue.Queue<string>>()
          const queue = yield* Queue.sliding<string>(STREAM_BACKLOG)
          queues.add(queue)
          streams.set(userId, queues)
          return Option.some(queue)
        }),
        (registered) =>
          Effect.sync(() => {
            if (Option.isNone(registered)) return
            const queues = streams.get(userId)
            queues?.delete(registered.value)
            if (queues?.size === 0) streams.delete(userId)
          })
      ).pipe(Effect.map(Option.map((queue): Queue.Dequeue<string> => queue)))

    const dispatch = (payload: string) =>
      Effect.sync(() => {
        if (payload.startsWith(origin)) return
        const colon = payload.indexOf(":")
        const space = payload.indexOf(" ", colon)
        if (colon < 0 || space < 0) return
        publish([{ userId: payload.slice(colon + 1, space), ref: payload.slice(space + 1) }])
      })

    const listen = Effect.scoped(Effect.gen(function*() {
      const notifications = yield* pg.listen(INBOX_CHANNEL)
      return yield* Effect.forever(Effect.flatMap(Queue.take(notifications), ({ payload }) => dispatch(payload)))
    }))

    return InboxSignals.of({
      enabled,
      changed,
      outgoing: Queue.takeBetween(toOthers, 1, OUTGOING_BATCH),
      subscribe,
      open: (userId) => streams.get(userId)?.size ?? 0,
      listen
    })
  }))
}
