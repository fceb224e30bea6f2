/**
 * The activity feed: the "merged account history, newest first, 20 per page"
 * of GET /activity-feed. Notifications, live activities and prompt responses
 * each write their entry: `add` in their unit of work, `record` at once (in
 * their transaction when they have one); `page` is what the History group's
 * handler serves.
 */
import { ActivityFeedPage } from "@herald/api"
import type { ActivityFeedKind } from "@herald/api"
import { Clock, Context, Effect, Layer } from "effect"
import { makeId } from "../lib/Ids.ts"
import { ActivityFeedRepo } from "./ActivityFeedRepo.ts"
import type { Concluded, Recorded } from "./ActivityFeedRepo.ts"

/** spec Limits: activity feed page size 20. */
export const FEED_PAGE_SIZE = 20

/** One thing that happened on the account. */
export interface FeedEntry {
  readonly userId: string
  readonly kind: ActivityFeedKind
  /** The id of what the entry is about (`anot_…`, `act_…`, `int_…`): one entry per (user, kind, refId). */
  readonly refId: string
  readonly sourceName: string
  readonly sourceImageUrl?: string | null
  readonly title: string
  readonly detail?: string | null
  readonly url?: string | null
  /** The outcome, e.g. a prompt's answer or how a live activity ended. */
  readonly result?: string | null
  /** Defaults to now; pass the source's own time so both agree. */
  readonly createdAt?: string
}

export class ActivityFeed extends Context.Service<ActivityFeed, {
  /**
   * Writes the entry. Recording the same (user, kind, refId) again keeps the
   * one entry, its id and its time, and takes the new title, detail, url,
   * result and source (so a live activity can record its start, then its
   * end). Joins the caller's open transaction.
   */
  readonly record: (entry: FeedEntry) => Effect.Effect<Recorded>
  /** The same write, of one entry per distinct (user, kind, refId), in the caller's unit of work (db/UnitOfWork.ts; now when there is none). */
  readonly add: (entries: ReadonlyArray<FeedEntry>) => Effect.Effect<void>
  /** Sets the title, detail and result of an entry recorded earlier, keeping its source and time (a live activity's end); joins the caller's transaction. */
  readonly conclude: (entry: Concluded) => Effect.Effect<void>
  /** Page `page` (1-based) of the account's feed, newest first; a page past the end has no items. */
  readonly page: (userId: string, page: number) => Effect.Effect<ActivityFeedPage>
}>()("herald/ActivityFeed") {
  static readonly layerNoDeps = Layer.effect(ActivityFeed, Effect.gen(function*() {
    const repo = yield* ActivityFeedRepo

    const rowOf = (entry: FeedEntry) => Effect.gen(function*() {
      return {
        id: yield* makeId("afi"),
        userId: entry.userId,
        kind: entry.kind,
        refId: entry.refId,
        sourceName: entry.sourceName,
        sourceImageUrl: entry.sourceImageUrl ?? null,
        title: entry.title,
        detail: entry.detail ?? null,
        url: entry.url ?? null,
        result: entry.result ?? null,
        createdAt: entry.createdAt ?? new Date(yield* Clock.currentTimeMillis).toISOString()
      }
    })
    const record = Effect.fn("ActivityFeed.record")(function*(entry: FeedEntry) {
      return yield* repo.upsert(yield* rowOf(entry))
    })

    const add = (entries: ReadonlyArray<FeedEntry>) => Effect.flatMap(Effect.forEach(entries, rowOf), repo.add)

    const page = Effect.fn("ActivityFeed.page")(function*(userId: string, page: number) {
      const [items, total] = yield* Effect.all([
        repo.page(userId, FEED_PAGE_SIZE, (Math.max(1, page) - 1) * FEED_PAGE_SIZE),
        repo.count(userId)
      ])
      return new ActivityFeedPage({ items, page, pageSize: FEED_PAGE_SIZE, total })
    })

    return ActivityFeed.of({ record, add, page, conclude: repo.conclude })
  }))

  static readonly layer = ActivityFeed.layerNoDeps.pipe(Layer.provide(ActivityFeedRepo.layer))
}
