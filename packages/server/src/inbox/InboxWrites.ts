/**
 * How other capabilities put items into the inbox: notifications, prompts and
 * webhook events write one row per recipient. `add` joins the caller's unit of
 * work (db/UnitOfWork.ts), so the inbox copy commits with the notification or
 * event it belongs to, in the same statement; `insert` writes at once, in the
 * caller's transaction when there is one.
 *
 * Every write, and every change of an item's state the owning capability
 * reports through `changed` (a prompt answered, a notification withdrawn, a
 * page acknowledged), reaches the person's open inbox streams
 * (InboxSignals.ts) once it commits: one place announces them all. `forward`
 * tells the other processes (PostgreSQL), after the commits, never in them.
 */
import type { BodyFormat, InboxOrigin } from "@herald/api"
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { afterCommit } from "../db/UnitOfWork.ts"
import { InboxRepo } from "./InboxRepo.ts"
import { InboxSignals } from "./InboxSignals.ts"
import type { InboxChange } from "./InboxSignals.ts"
import { previewOf } from "./Preview.ts"

export { PREVIEW_MAX, previewOf } from "./Preview.ts"

/** One recipient's copy of a notification or event. */
export interface NewInboxItem {
  readonly userId: string
  readonly origin: InboxOrigin
  /** The notification (`anot_…`) or event (`evt_…`) id; the inbox id is `${origin}:${itemId}`. */
  readonly itemId: string
  readonly projectId?: string | null
  readonly sourceName: string
  readonly sourceImageUrl?: string | null
  readonly title: string
  readonly body: string
  readonly summary?: string | null
  readonly bodyFormat?: BodyFormat
  readonly url?: string | null
  readonly appId?: string | null
  /** Defaults to `previewOf(body, bodyFormat)`. */
  readonly preview?: string
  /** Defaults to now; pass the source's own time so both agree. */
  readonly createdAt?: string
}

export class InboxWrites extends Context.Service<InboxWrites, {
  /**
   * Inserts the items in one statement. An item already in that person's
   * inbox (same origin and id) is left as it is, so a retried write is
   * harmless. Answers how many items were new.
   */
  readonly insert: (items: ReadonlyArray<NewInboxItem>) => Effect.Effect<number>
  /** The same insert in the caller's unit of work, committed with its other rows (now when there is none). */
  readonly add: (items: ReadonlyArray<NewInboxItem>) => Effect.Effect<void>
  /**
   * Items whose state changed: the person's open streams hear of each once
   * the change commits (the caller's unit of work or transaction; at once
   * with neither). Call it in the changing transaction, or after the change.
   */
  readonly changed: (changes: ReadonlyArray<InboxChange>) => Effect.Effect<void>
  /**
   * One iteration of telling the other processes (PostgreSQL; a worker runs
   * it): waits for queued changes and sends them as one NOTIFY statement.
   */
  readonly forward: Effect.Effect<void>
}>()("herald/InboxWrites") {
  static readonly layerNoDeps = Layer.effect(InboxWrites, Effect.gen(function*() {
    const repo = yield* InboxRepo
    const signals = yield* InboxSignals
    const sql = yield* SqlClient.SqlClient
    const changesOf = (items: ReadonlyArray<NewInboxItem>): ReadonlyArray<InboxChange> =>
      items.map((item) => ({ userId: item.userId, ref: `${item.origin}:${item.itemId}` }))
    // Once committed: after the unit of work's statement, or the caller's transaction.
    const announced = (changes: ReadonlyArray<InboxChange>) => afterCommit(sql, signals.changed(changes))
    const rowsOf = <Items extends ReadonlyArray<NewInboxItem>>(items: Items) =>
      Effect.map(Clock.currentTimeMillis, (millis) => {
        const now = new Date(millis).toISOString()
        return items.map((item) => {
          const bodyFormat = item.bodyFormat ?? "text"
          return {
            userId: item.userId,
            origin: item.origin,
            itemId: item.itemId,
            projectId: item.projectId ?? null,
            sourceName: item.sourceName,
            sourceImageUrl: item.sourceImageUrl ?? null,
            title: item.title,
            preview: item.preview ?? previewOf(item.body, bodyFormat),
            body: item.body,
            summary: item.summary ?? null,
            bodyFormat,
            url: item.url ?? null,
            appId: item.appId ?? null,
            createdAt: item.createdAt ?? now
          }
        })
      })

    const insert = Effect.fnUntraced(function*(items: ReadonlyArray<NewInboxItem>) {
      if (items.length === 0) return 0
      const added = yield* repo.insert(yield* rowsOf(items))
      // Written already: after the caller's transaction, not its unit of work (which may still fail).
      if (added > 0) yield* sql.afterCommit(signals.changed(changesOf(items)))
      return added
    }, Effect.withSpan("InboxWrites.insert"))
    const add = (items: ReadonlyArray<NewInboxItem>) =>
      items.length === 0 ? Effect.void : Effect.andThen(Effect.flatMap(rowsOf(items), repo.add), announced(changesOf(items)))
    const changed = (changes: ReadonlyArray<InboxChange>) => changes.length === 0 ? Effect.void : announced(changes)
    // The changes queued since the last statement, in one.
    const forward = Effect.flatMap(signals.outgoing, repo.announce).pipe(Effect.withSpan("InboxWrites.forward"))
    return InboxWrites.of({ insert, add, changed, forward })
  }))

  static readonly layer = InboxWrites.layerNoDeps.pipe(Layer.provide([InboxRepo.layer, InboxSignals.layer]))
}
