/**
 * Reading a team's audit log: the rules of GET /teams/{id}/audit. No HTTP
 * here; auditHttp.ts calls these.
 *
 * Admins and the owner read it (a member 403, a non-member 404: Membership).
 * Paging is keyset on (created_at, id), newest first, so entries written
 * while someone pages never shift a page. The cursor is signed as the inbox's
 * is (inbox/Cursor.ts), with its own key in `server_secrets` and kind `a`; it
 * names the team and filters it was made for, so it cannot be altered or
 * carried to another team or filter.
 *
 * The CSV form streams in keyset pages of `CSV_PAGE_ROWS`, never holding the
 * whole log; whether more than `AUDIT_CSV_MAX_ROWS` match is counted (up to
 * one more) before the first byte, as the truncation flag is a header.
 */
import { AUDIT_CSV_MAX_ROWS, AuditLogPage, BadRequest } from "@herald/api"
import type { AuditLogQuery, Forbidden, NotFound } from "@herald/api"
import { Context, Effect, Layer, Option, Schema, Stream } from "effect"
import { ServerSecrets } from "../db/ServerSecrets.ts"
import { open, sign } from "../inbox/Cursor.ts"
import { csvHeader, csvLine } from "./AuditCsv.ts"
import { AuditLogRepo, entryOf, keyOf } from "./AuditLogRepo.ts"
import type { AuditFilter, AuditKey } from "./AuditLogRepo.ts"
import { Membership } from "./Membership.ts"

/** decisions.md: `limit` 1–200, 50 when absent. */
export const DEFAULT_AUDIT_LIMIT = 50
/** Rows read per query while streaming CSV. */
export const CSV_PAGE_ROWS = 1_000
/** The row of `server_secrets` holding the cursor signing key (32 random bytes, hex). */
export const AUDIT_CURSOR_KEY_NAME = "audit_cursor_key"

const CursorContent = Schema.Struct({
  k: Schema.Literal("a"),
  f: Schema.String,
  at: Schema.String.check(Schema.isPattern(/^-?[0-9]{1,19}$/)),
  i: Schema.String
})
const decodeCursor = Schema.decodeUnknownOption(Schema.fromJsonString(CursorContent))

/** The team and filters a cursor is bound to, as one string. */
const filterKey = (filter: AuditFilter): string => JSON.stringify([filter.teamId, filter.from ?? null, filter.to ?? null, filter.action ?? null])

const badCursor = new BadRequest({ error: "Invalid cursor: pass `nextCursor` back unchanged, with the same filters." })

/** A CSV answer: whether rows were left out, and the body (header row first). */
export interface AuditCsvExport {
  readonly truncated: boolean
  readonly body: Stream.Stream<Uint8Array>
}

export class AuditLog extends Context.Service<AuditLog, {
  readonly page: (userId: string, teamId: string, query: AuditLogQuery) => Effect.Effect<AuditLogPage, BadRequest | Forbidden | NotFound>
  readonly csv: (userId: string, teamId: string, query: AuditLogQuery) => Effect.Effect<AuditCsvExport, Forbidden | NotFound>
}>()("herald/AuditLog") {
  static readonly layerNoDeps = Layer.effect(AuditLog, Effect.gen(function*() {
    const repo = yield* AuditLogRepo
    const membership = yield* Membership
    const secrets = yield* ServerSecrets
    // The first server to start creates the key; every server (and restart) reads that one.
    const key = Buffer.from(yield* secrets.key(AUDIT_CURSOR_KEY_NAME), "hex")

    const cursorOf = (filter: AuditFilter, after: AuditKey) => sign(key, { k: "a", f: filterKey(filter), at: after.at, i: after.id })
    const openCursor = (token: string, filter: AuditFilter): Option.Option<AuditKey> =>
      open(key, token).pipe(
        Option.flatMap(decodeCursor),
        Option.filter((c) => c.f === filterKey(filter)),
        Option.map((c) => ({ at: c.at, id: c.i }))
      )

    const filterOf = (teamId: string, query: AuditLogQuery): AuditFilter => ({
      teamId,
      from: query.from,
      to: query.to,
      action: query.action
    })

    const page = Effect.fn("AuditLog.page")(function*(userId: string, teamId: string, query: AuditLogQuery) {
      yield* membership.require(userId, teamId, "admin")
      const filter = filterOf(teamId, query)
      let after: AuditKey | null = null
      if (query.cursor !== undefined) {
        const opened = openCursor(query.cursor, filter)
        if (Option.isNone(opened)) return yield* badCursor
        after = opened.value
      }
      const limit = query.limit ?? DEFAULT_AUDIT_LIMIT
      // One more than the page tells whether a next page exists.
      const rows = yield* repo.page(filter, after, limit + 1)
      const shown = rows.slice(0, limit)
      const last = shown[shown.length - 1]
      return new AuditLogPage({
        entries: shown.map(entryOf),
        nextCursor: rows.length > limit && last !== undefined ? cursorOf(filter, keyOf(last)) : null
      })
    })

    const csv = Effect.fn("AuditLog.csv")(function*(userId: string, teamId: string, query: AuditLogQuery) {
      yield* membership.require(userId, teamId, "admin")
      const filter = filterOf(teamId, query)
      const truncated = (yield* repo.countUpTo(filter, AUDIT_CSV_MAX_ROWS + 1)) > AUDIT_CSV_MAX_ROWS
      const encoder = new TextEncoder()
      const rows = Stream.paginate(
        { after: null as AuditKey | null, left: AUDIT_CSV_MAX_ROWS },
        ({ after, left }) => {
          const size = Math.min(CSV_PAGE_ROWS, left)
          return Effect.map(repo.page(filter, after, size), (batch) => {
            const last = batch[batch.length - 1]
            const chunk = batch.length === 0 ? [] : [encoder.encode(batch.map((row) => csvLine(entryOf(row))).join(""))]
            // A short page is the end of the log; a full one goes on until the cap.
            const more = last !== undefined && batch.length === size && left > size
            return [chunk, more ? Option.some({ after: keyOf(last), left: left - size }) : Option.none()] as const
          })
        }
      )
      return { truncated, body: Stream.concat(Stream.succeed(encoder.encode(csvHeader)), rows) } satisfies AuditCsvExport
    })

    return AuditLog.of({ page, csv })
  }))

  static readonly layer = AuditLog.layerNoDeps.pipe(Layer.provide([AuditLogRepo.layer, ServerSecrets.layer]))
}
