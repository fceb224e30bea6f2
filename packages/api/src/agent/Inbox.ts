import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { InboxNotificationDetail, InboxNotificationPage, InboxProjects, ReadMark } from "../domain/Inbox.ts"
import { BadRequest, NotFound } from "../errors.ts"
import { agentOperation } from "../Operation.ts"
import { InboxItemRef } from "../Params.ts"
import { AgentAuth } from "../Security.ts"
import { IntParam } from "./History.ts"

export const InboxListQuery = Schema.Struct({
  limit: Schema.optionalKey(IntParam(1, 50)),
  project: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100))),
  unread: Schema.optionalKey(Schema.Literals(["1", "true"])),
  cursor: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(512)))
}).annotate({ identifier: "InboxListQuery" })
export type InboxListQuery = typeof InboxListQuery.Type

/** Body of POST /inbox/notifications/read-all. */
export const ReadAllRequest = Schema.Struct({
  readThroughToken: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(512))
}).annotate({ identifier: "ReadAllRequest" })
export type ReadAllRequest = typeof ReadAllRequest.Type

export class ReadAllResult extends Schema.Class<ReadAllResult>("ReadAllResult")({
  ok: Schema.Literal(true),
  /** How many items this call marked read. */
  marked: Schema.Natural
}) {}

export class InboxGroup extends HttpApiGroup.make("inbox")
  .add(
    HttpApiEndpoint.get("projects", "/inbox/projects", { success: InboxProjects }).pipe(agentOperation({
      summary: "Inbox by project",
      description: "Each project the inbox holds items of (`projectId` null: the unfiled ones), with unread and total " +
        "counts and its latest item; most recent project first. `name` is the project id, or `Unfiled`. At most 500 " +
        "projects are listed (the most recent); `totalUnread` counts every unread item.",
      scopes: ["inbox:read"]
    })),
    HttpApiEndpoint.get("list", "/inbox/notifications", {
      query: InboxListQuery,
      success: InboxNotificationPage,
      error: [BadRequest, NotFound]
    }).pipe(agentOperation({
      summary: "List the inbox",
      description: "Newest first with cursor pagination: `limit` 1–50 (default 20), `project` (a project id or the " +
        "word `unfiled`), `unread` (`1` or `true`), `cursor` (from `nextCursor`). Cursors are opaque and stable under " +
        "concurrent inserts: paging never skips or repeats an item; a cursor that was altered answers 400 " +
        "`BAD_REQUEST`, and so does a cursor used with other `project` or `unread` filters than it was made with (`limit` " +
        "may change). A project with no items gives an empty page. `readThroughToken` marks this moment of the whole " +
        "inbox, whatever the filters, for read-all.",
      scopes: ["inbox:read"]
    })),
    HttpApiEndpoint.post("readAll", "/inbox/notifications/read-all", {
      payload: ReadAllRequest,
      success: ReadAllResult,
      error: BadRequest
    }).pipe(agentOperation({
      summary: "Mark the inbox read",
      description: "Marks every item up to a list response's `readThroughToken` read (in every project, whatever that list's " +
        "filters); items that arrived after that list response stay unread. `marked` counts the items this call " +
        "changed. An altered token, or another account's, answers 400 `BAD_REQUEST`.",
      scopes: ["inbox:write"]
    })),
    HttpApiEndpoint.get("get", "/inbox/notifications/:id", {
      params: { id: InboxItemRef },
      success: InboxNotificationDetail,
      error: NotFound
    }).pipe(agentOperation({
      summary: "One inbox item",
      description: "An inbox item by composite id (`event:<id>` or `notification:<id>`), with its body and the push " +
        "receipt of each of the account's devices (`pending`, `accepted`, `error`, `unknown`: sent, but the outcome was " +
        "lost in a crash). `status` is `withdrawn` for a withdrawn notification, otherwise null.",
      scopes: ["inbox:read"]
    })),
    HttpApiEndpoint.post("read", "/inbox/notifications/:id/read", {
      params: { id: InboxItemRef },
      success: ReadMark,
      error: NotFound
    }).pipe(agentOperation({
      summary: "Mark an inbox item read",
      description: "Marks the item read; already read answers the first `readAt` with `idempotent: true` (false when this call " +
        "marked it).",
      scopes: ["inbox:write"]
    })),
    HttpApiEndpoint.post("unread", "/inbox/notifications/:id/unread", {
      params: { id: InboxItemRef },
      success: ReadMark,
      error: NotFound
    }).pipe(agentOperation({
      summary: "Mark an inbox item unread",
      description: "Marks the item unread (`readAt` null); already unread answers `idempotent: true` (false when this call " +
        "marked it).",
      scopes: ["inbox:write"]
    }))
  )
  .middleware(AgentAuth)
{}
