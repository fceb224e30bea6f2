/**
 * How other capabilities put items into the inbox: notifications, prompts and
 * webhook events write one row per recipient. `add` joins the caller's unit of
 * work (db/UnitOfWork.ts), so the inbox copy commits with the notification or
 * event it belongs to, in the same statement; `insert` writes at once, in the
 * caller's transaction when there is one.
 */
import type { BodyFormat, InboxOrigin } from "@herald/api"
import { Clock, Context, Effect, Layer } from "effect"
import { InboxRepo } from "./InboxRepo.ts"
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
}>()("herald/InboxWrites") {
  static readonly layerNoDeps = Layer.effect(InboxWrites, Effect.gen(function*() {
    const repo = yield* InboxRepo
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
      return yield* repo.insert(yield* rowsOf(items))
    }, Effect.withSpan("InboxWrites.insert"))
    const add = (items: ReadonlyArray<NewInboxItem>) => Effect.flatMap(rowsOf(items), repo.add)
    return InboxWrites.of({ insert, add })
  }))

  static readonly layer = InboxWrites.layerNoDeps.pipe(Layer.provide(InboxRepo.layer))
}
