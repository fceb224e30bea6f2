/** Provisional: replaced by the inbox capability's InboxWrites at integration. */
import { Array as Arr, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { Statement } from "effect/sql"

export interface NewInboxItem {
  readonly userId: string
  readonly origin: "event" | "notification"
  readonly itemId: string
  readonly projectId: string | null
  readonly sourceName: string
  readonly sourceImageUrl: string | null
  readonly title: string
  readonly body: string
  readonly summary: string | null
  readonly bodyFormat: "text" | "markdown"
  readonly url: string | null
  readonly appId: string | null
}

export const previewOf = (body: string, _format: "text" | "markdown"): string => body.replace(/\s+/g, " ").trim().slice(0, 200)

export class InboxWrites extends Context.Service<InboxWrites, {
  readonly insert: (items: ReadonlyArray<NewInboxItem>) => Effect.Effect<void>
  readonly insertStatement: (items: Arr.NonEmptyReadonlyArray<NewInboxItem>) => Statement.Statement<unknown>
}>()("herald/InboxWrites") {
  static readonly layer = Layer.effect(InboxWrites, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const insertStatement = (items: Arr.NonEmptyReadonlyArray<NewInboxItem>) =>
      sql`INSERT INTO inbox_items ${sql.insert(Arr.map(items, (i) => ({ ...i, preview: previewOf(i.body, i.bodyFormat) })))}`
    const insert = (items: ReadonlyArray<NewInboxItem>) =>
      Arr.isReadonlyArrayNonEmpty(items)
        ? sql`INSERT INTO inbox_items ${sql.insert(Arr.map(items, (i) => ({ ...i, preview: previewOf(i.body, i.bodyFormat) })))}`.pipe(Effect.asVoid, Effect.orDie)
        : Effect.void
    return InboxWrites.of({ insert, insertStatement })
  }))
}
