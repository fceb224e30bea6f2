/**
 * The inbox's rules: a person's copies of notifications and webhook events,
 * newest first, by project, with read state. No HTTP here; http.ts calls these.
 *
 * Paging is keyset on `seq` (strictly below the last item shown), so items
 * that arrive while a caller pages never shift a page: nothing is skipped or
 * repeated. Cursors and read-through tokens are signed (Cursor.ts) with a key
 * kept in `server_secrets`, read once when the layer starts. A read mark is
 * announced to the person's open inbox streams (InboxWrites.changed), so
 * every open console shows the same read state.
 */
import { BadRequest, InboxNotificationDetail, InboxNotificationPage, InboxProjects, NotFound, ReadAllResult, ReadMark } from "@herald/api"
import type { InboxListQuery, InboxOrigin } from "@herald/api"
import { Context, Effect, Layer, Option } from "effect"
import { ServerSecrets } from "../db/ServerSecrets.ts"
import { filterKey, makeInboxTokens } from "./Cursor.ts"
import { InboxRepo } from "./InboxRepo.ts"
import type { ProjectFilter } from "./InboxRepo.ts"
import { InboxWrites } from "./InboxWrites.ts"

/** spec Limits: inbox list `limit` 1–50; 20 when absent. */
export const DEFAULT_LIST_LIMIT = 20
/** The projects listed by GET /inbox/projects, most recent first (`totalUnread` still counts all). */
export const MAX_INBOX_PROJECTS = 500
/** The row of `server_secrets` holding the signing key (32 random bytes, hex). */
export const CURSOR_KEY_NAME = "inbox_cursor_key"

const UNFILED = "unfiled"

const notFound = new NotFound({ error: "Inbox item not found." })

/** `event:evt_…` / `notification:anot_…` → origin and item id (the path schema already checked the shape). */
const parseRef = (ref: string): { origin: InboxOrigin; itemId: string } => {
  const colon = ref.indexOf(":")
  return { origin: ref.slice(0, colon) as InboxOrigin, itemId: ref.slice(colon + 1) }
}

export class Inbox extends Context.Service<Inbox, {
  readonly projects: (userId: string) => Effect.Effect<InboxProjects>
  readonly list: (userId: string, query: InboxListQuery) => Effect.Effect<InboxNotificationPage, BadRequest>
  readonly get: (userId: string, ref: string) => Effect.Effect<InboxNotificationDetail, NotFound>
  readonly markRead: (userId: string, ref: string) => Effect.Effect<ReadMark, NotFound>
  readonly markUnread: (userId: string, ref: string) => Effect.Effect<ReadMark, NotFound>
  readonly readAll: (userId: string, readThroughToken: string) => Effect.Effect<ReadAllResult, BadRequest>
  /** Marks every item the inbox holds now read (the Person API's read-all without a token). */
  readonly readAllNow: (userId: string) => Effect.Effect<ReadAllResult>
}>()("herald/Inbox") {
  static readonly layerNoDeps = Layer.effect(Inbox, Effect.gen(function*() {
    const repo = yield* InboxRepo
    const writes = yield* InboxWrites
    const secrets = yield* ServerSecrets
    // The first server to start creates the key; every server (and restart) reads that one.
    const tokens = makeInboxTokens(yield* secrets.key(CURSOR_KEY_NAME))

    const projects = Effect.fn("Inbox.projects")(function*(userId: string) {
      const [rows, totalUnread] = yield* Effect.all([repo.projects(userId, MAX_INBOX_PROJECTS), repo.totalUnread(userId)])
      return new InboxProjects({ projects: rows, totalUnread })
    })

    const list = Effect.fn("Inbox.list")(function*(userId: string, query: InboxListQuery) {
      const limit = query.limit ?? DEFAULT_LIST_LIMIT
      const unreadOnly = query.unread !== undefined
      const filter = filterKey({ project: query.project, unread: unreadOnly })
      const project: ProjectFilter = query.project === undefined
        ? { _tag: "Any" }
        : query.project === UNFILED
        ? { _tag: "Unfiled" }
        : { _tag: "Project", projectId: query.project }
      let beforeSeq: string | null = null
      if (query.cursor !== undefined) {
        const seq = tokens.openCursor(query.cursor, userId, filter)
        if (Option.isNone(seq)) {
          return yield* new BadRequest({ error: "Invalid cursor: pass `nextCursor` back unchanged, with the same filters." })
        }
        beforeSeq = seq.value
      }
      // The top is read before the page: an item that lands in between may be
      // shown yet stay above the token (it stays unread on read-all), but an
      // item never shown is never under it.
      const top = yield* repo.topSeq(userId)
      const rows = yield* repo.list({ userId, project, unreadOnly, beforeSeq, limit })
      const page = rows.slice(0, limit)
      const last = page[page.length - 1]
      return new InboxNotificationPage({
        items: page.map((listed) => listed.item),
        nextCursor: rows.length > limit && last !== undefined ? tokens.cursor(userId, filter, last.seq) : null,
        readThroughToken: tokens.readThrough(userId, top)
      })
    })

    const get = Effect.fn("Inbox.get")(function*(userId: string, ref: string) {
      const key = { userId, ...parseRef(ref) }
      const found = yield* repo.find(key)
      if (Option.isNone(found)) return yield* notFound
      const receipts = yield* repo.receipts(key)
      return new InboxNotificationDetail({ ...found.value, pushReceipts: receipts })
    })

    // `idempotent` when the item was already in the asked state; a read item keeps its first `readAt`.
    const mark = (read: boolean) =>
      Effect.fn(read ? "Inbox.markRead" : "Inbox.markUnread")(function*(userId: string, ref: string) {
        const key = { userId, ...parseRef(ref) }
        const result = yield* (read ? repo.markRead(key) : repo.markUnread(key))
        if (Option.isNone(result)) return yield* notFound
        if (result.value.wasRead !== read) yield* writes.changed([{ userId, ref }])
        return new ReadMark({ ok: true, readAt: result.value.readAt, idempotent: result.value.wasRead === read })
      })

    const readAll = Effect.fn("Inbox.readAll")(function*(userId: string, readThroughToken: string) {
      const seq = tokens.openReadThrough(readThroughToken, userId)
      if (Option.isNone(seq)) {
        return yield* new BadRequest({ error: "Invalid readThroughToken: pass a list response's token unchanged." })
      }
      return new ReadAllResult({ ok: true, marked: yield* repo.readThrough(userId, seq.value) })
    })

    const readAllNow = Effect.fn("Inbox.readAllNow")(function*(userId: string) {
      return new ReadAllResult({ ok: true, marked: yield* repo.readThrough(userId, yield* repo.topSeq(userId)) })
    })

    return Inbox.of({
      projects,
      list,
      get,
      markRead: mark(true),
      markUnread: mark(false),
      readAll,
      readAllNow
    })
  }))

  static readonly layer = Inbox.layerNoDeps.pipe(Layer.provide([InboxRepo.layer, ServerSecrets.layer, InboxWrites.layer]))
}
