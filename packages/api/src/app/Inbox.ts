/**
 * The person's inbox in the console: the Agent API's inbox reads and read
 * marks for the signed-in person, and a live stream of the inbox's changes
 * (server-sent events) so an open page updates without reload.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { InboxItemId, InboxNotificationDetail, InboxNotificationPage, InboxOrigin, ReadMark } from "../domain/Inbox.ts"
import { BadRequest, NotFound } from "../errors.ts"
import { InboxListQuery, ReadAllResult } from "../agent/Inbox.ts"
import { personOperation } from "../Operation.ts"
import { InboxItemRef } from "../Params.ts"
import { PersonAuth } from "../Security.ts"

/** Body of POST /api/app/inbox/read-all: a list response's token, or nothing for "everything so far". */
export const PersonReadAllRequest = Schema.Struct({
  readThroughToken: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(512)))
}).annotate({ identifier: "PersonReadAllRequest" })
export type PersonReadAllRequest = typeof PersonReadAllRequest.Type

/** What one `item` event of the inbox stream says: which item changed. */
export class InboxStreamItem extends Schema.Class<InboxStreamItem>("InboxStreamItem")({
  id: InboxItemId,
  origin: InboxOrigin
}) {}

/** The stream's one event: `event: item`, `data: {"id","origin"}`. */
export const InboxStreamEvent = Schema.Struct({
  event: Schema.Literal("item"),
  id: Schema.optional(Schema.String),
  data: Schema.fromJsonString(InboxStreamItem)
}).annotate({ identifier: "InboxStreamEvent" })

/** How many inbox streams one person may hold open at once (each browser tab holds one). */
export const INBOX_STREAMS_PER_PERSON = 10

/** Seconds between the stream's `: ping` comments. */
export const INBOX_STREAM_PING_SECONDS = 25

export class PersonInboxGroup extends HttpApiGroup.make("inbox")
  .add(
    HttpApiEndpoint.get("list", "/inbox", {
      query: InboxListQuery,
      success: InboxNotificationPage,
      error: BadRequest
    }).pipe(personOperation({
      summary: "List my inbox",
      description: "The signed-in person's inbox, newest first, exactly as the Agent API's `GET /inbox/notifications` " +
        "lists it: `limit` 1–50 (default 20), `project` (a project id or `unfiled`), `unread` (`1` or `true`), " +
        "`cursor` (from `nextCursor`; an altered cursor, or one used with other filters, answers 400 `BAD_REQUEST`). " +
        "Read state is kept on the server: every client of the person sees the same."
    })),
    HttpApiEndpoint.get("stream", "/inbox/stream", {
      success: HttpApiSchema.StreamSse({ events: InboxStreamEvent })
    }).pipe(personOperation({
      summary: "Follow my inbox live",
      description: "A `text/event-stream` that stays open: `event: item` with `data: {\"id\", \"origin\"}` whenever an " +
        "item of the person's inbox is created or changes state (a prompt answered, canceled or expired; a " +
        "notification withdrawn; a page acknowledged or resolved; an item marked read or unread — " +
        "read-all is not announced, the client that did it knows), and a `: ping` comment when it opens and " +
        `every ${INBOX_STREAM_PING_SECONDS} s. Read the item with GET /inbox/{id}. Changes made on any Herald ` +
        "process reach every stream. Nothing is replayed: after a reconnect, list the inbox again. The stream ends " +
        "when the session is signed out, revoked or expires (a reconnect then answers 401). A person holds at most " +
        `${INBOX_STREAMS_PER_PERSON} streams open at once: one more answers 429 \`RATE_LIMITED\`.`
    })),
    HttpApiEndpoint.post("readAll", "/inbox/read-all", {
      payload: PersonReadAllRequest,
      success: ReadAllResult,
      error: BadRequest
    }).pipe(personOperation({
      summary: "Mark my inbox read",
      description: "With `readThroughToken` (from a list response), marks every item up to that list response read, " +
        "whatever its filters; without one, every item the inbox holds now. Items that arrive later stay unread. " +
        "`marked` counts the items this call changed. An altered or another person's token answers 400 `BAD_REQUEST`."
    })),
    HttpApiEndpoint.get("get", "/inbox/:id", {
      params: { id: InboxItemRef },
      success: InboxNotificationDetail,
      error: NotFound
    }).pipe(personOperation({
      summary: "One item of my inbox",
      description: "An inbox item by composite id (`notification:anot_…`, `interaction:int_…`, `page:page_…`, " +
        "`event:evt_…`) with its body, its state (`status`: `withdrawn` for a withdrawn notification, a prompt's or " +
        "a page's status) and the push receipt of each of the person's devices. Another person's item answers 404, " +
        "as a missing one."
    })),
    HttpApiEndpoint.post("read", "/inbox/:id/read", {
      params: { id: InboxItemRef },
      success: ReadMark,
      error: NotFound
    }).pipe(personOperation({
      summary: "Mark an item read",
      description: "Marks the item read; already read answers the first `readAt` with `idempotent: true`. Another " +
        "person's item: 404."
    })),
    HttpApiEndpoint.post("unread", "/inbox/:id/unread", {
      params: { id: InboxItemRef },
      success: ReadMark,
      error: NotFound
    }).pipe(personOperation({
      summary: "Mark an item unread",
      description: "Marks the item unread (`readAt` null); already unread answers `idempotent: true`. Another " +
        "person's item: 404."
    }))
  )
  .middleware(PersonAuth)
{}
