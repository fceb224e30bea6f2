/**
 * Pages of on-call groups (spec "On-call": POST /oncall/{groupId}/pages,
 * GET /teams/{id}/pages, GET /pages/{id}, POST /pages/{id}/resolve; bodies and
 * scopes from decisions.md). Acknowledging and escalating are the person's,
 * in the Person API (`app/Pages.ts`): there is no agent route for them.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { TapUrl } from "../domain/Common.ts"
import { OncallPage, OncallPageList, PageCreated, PageDeduplicated, PageReplay, PageStatus } from "../domain/Oncall.ts"
import { BadRequest, Forbidden, IdempotencyKeyInUse, IdempotencyKeyReused, NotFound } from "../errors.ts"
import { agentOperation } from "../Operation.ts"
import { OncallGroupId, PageId, TeamId } from "../Params.ts"
import { AgentAuth } from "../Security.ts"
import { IntParam } from "./History.ts"
import { IdempotencyHeaders } from "./Notifications.ts"

/** A dedup key: what makes two pages "the same" while the first is open. */
export const DedupKey = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(255)).annotate({
  identifier: "DedupKey",
  description: "1–255 characters. An open page of the group with the same key absorbs a new page."
})

/** Body of POST /oncall/{groupId}/pages. */
export const CreatePageRequest = Schema.Struct({
  title: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200)),
  body: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(10_000)))),
  url: Schema.optionalKey(Schema.NullOr(TapUrl)),
  appId: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^app_[0-9A-Za-z]{1,64}$/))),
  dedupKey: Schema.optionalKey(DedupKey)
}).annotate({ identifier: "CreatePageRequest" })
export type CreatePageRequest = typeof CreatePageRequest.Type

/** Query of GET /teams/{id}/pages. */
export const PagesQuery = Schema.Struct({
  status: Schema.optionalKey(PageStatus),
  limit: Schema.optionalKey(IntParam(1, 100)),
  cursor: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200)))
}).annotate({ identifier: "PagesQuery" })
export type PagesQuery = typeof PagesQuery.Type

/** The default and largest `limit` of GET /teams/{id}/pages. */
export const PAGES_LISTED_DEFAULT = 50

export const PAGE_RULES = "A page starts `triggered`: the person on call at that moment (an override wins for its " +
  "window) is paged at step 0 on every active device with a time-sensitive alert, and the page is filed in their " +
  "inbox and activity feed. The group's escalation steps then run in order, each `afterMinutes` after the page's " +
  "creation: `next` pages the rotation member after the one on duty, `group` pages every rotation member. " +
  "Each person is paged at most once per step (`notified` lists `{userId, name, at, step}`), also across a restart. " +
  "A person acknowledging the page in the phone app (`acknowledged`) stops the escalation; resolving it " +
  "(`resolved`) stops it too and removes the alert from every device still showing it."

export class PagesGroup extends HttpApiGroup.make("pages")
  .add(
    HttpApiEndpoint.post("create", "/oncall/:groupId/pages", {
      params: { groupId: OncallGroupId },
      headers: IdempotencyHeaders,
      payload: CreatePageRequest,
      success: [PageReplay, PageDeduplicated, PageCreated.pipe(HttpApiSchema.status(201))],
      error: [NotFound, IdempotencyKeyReused, IdempotencyKeyInUse]
    }).pipe(agentOperation({
      summary: "Page an on-call group",
      description: "Pages the group: whoever is on call first, then escalation. Any member of the group's team may " +
        "page it (a non-member, or an unknown group: 404). " + PAGE_RULES + "\n\nDedup: while a page of the group with " +
        "the same `dedupKey` is open (not resolved), a new page is absorbed by it: 200 `{page, deduplicated: true}`, " +
        "its `repeatCount` + 1, nothing new pushed; otherwise 201 `{page, deduplicated: false}`. Without `dedupKey`, " +
        "the `Idempotency-Key` header is the dedup key. Concurrent pages with one key make exactly one page. " +
        "`Idempotency-Key`: the same body within 24 h replays the first answer with `idempotent: true` (200); another " +
        "body answers 422 `IDEMPOTENCY_KEY_REUSED`; a retry while the first runs answers 409 `IDEMPOTENCY_KEY_IN_USE`. " +
        "`appId` names a web app the account can see (else 404). Written to the team's audit log (`page.created`).",
      scopes: ["oncall:write"],
      sends: true
    })),
    HttpApiEndpoint.get("list", "/teams/:id/pages", {
      params: { id: TeamId },
      query: PagesQuery,
      success: OncallPageList,
      error: [BadRequest, NotFound]
    }).pipe(agentOperation({
      summary: "List a team's pages",
      description: "The team's pages, newest first; any member may read them (a non-member: 404). `status` filters " +
        "by status; `limit` 1–100 (default 50); pass `nextCursor` back as `cursor` for the next page (null at the " +
        "end; a cursor that is not one answers 400 `BAD_REQUEST`).",
      scopes: ["oncall:read"]
    })),
    HttpApiEndpoint.get("get", "/pages/:id", {
      params: { id: PageId },
      success: OncallPage,
      error: [NotFound]
    }).pipe(agentOperation({
      summary: "Read a page",
      description: "One page with who was notified. Any member of the page's team may read it; anyone else gets 404. " +
        "There is no agent route to acknowledge or escalate: a person does that in the phone app.",
      scopes: ["oncall:read"]
    })),
    HttpApiEndpoint.post("resolve", "/pages/:id/resolve", {
      params: { id: PageId },
      success: OncallPage,
      error: [NotFound, Forbidden]
    }).pipe(agentOperation({
      summary: "Resolve a page",
      description: "Resolves the page (`resolved`, `resolvedAt`, `resolvedBy`): no further escalation step runs, and " +
        "the removal command goes to every device still showing its alert (anyone still being paged is cleared). " +
        "Any member of the page's team may resolve it (a non-member: 404). Resolving a resolved page answers it " +
        "unchanged. Written to the team's audit log (`page.resolved`).",
      scopes: ["oncall:write"]
    }))
  )
  .middleware(AgentAuth)
{}
