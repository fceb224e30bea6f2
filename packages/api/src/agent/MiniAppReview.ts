/**
 * Reviewing personal mini-app packages (spec "Mini-app packages": review,
 * export, offer, report, block, disable, remove; decisions.md: offers). The
 * spec leaves the review and export records open; they are defined here.
 *
 * Review states: a package is published `personal-only`. Block, disable and
 * remove are the owner's transitions:
 *
 * | from \ action | block | disable | remove |
 * |---|---|---|---|
 * | personal-only | blocked | disabled | removed |
 * | disabled | blocked | disabled (no change) | removed |
 * | blocked | blocked (no change) | 409 | removed |
 * | removed | 409 | 409 | 409 |
 *
 * `removed` is final. A block is never softened into a disable.
 */
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { closedStruct, Timestamp } from "../domain/Common.ts"
import { MiniAppPackage, MiniAppReviewState } from "../domain/MiniApps.ts"
import { Conflict, LimitReached, NotFound, RateLimited } from "../errors.ts"
import { agentOperation } from "../Operation.ts"
import { PackageId } from "../Params.ts"
import { AgentAuth } from "../Security.ts"

/** decisions.md: one offer per package per minute. */
export const MINI_APP_OFFER_INTERVAL_SECONDS = 60
/** Reports one package keeps at most (the oldest are kept; a further report answers 422). */
export const MINI_APP_MAX_REPORTS = 100
export const MINI_APP_REPORT_REASON_MAX = 200
export const MINI_APP_REPORT_DETAIL_MAX = 2000

/** One of the account's packages as the review list shows it. */
export class MiniAppReviewEntry extends Schema.Class<MiniAppReviewEntry>("MiniAppReviewEntry")({
  packageId: Schema.String,
  appId: Schema.String,
  name: Schema.String,
  version: Schema.String,
  reviewState: MiniAppReviewState,
  /** Reports filed about the package. */
  reportCount: Schema.Int,
  /** When availability was last pushed to the owner's devices; null if never. */
  lastOfferedAt: Schema.NullOr(Timestamp),
  createdAt: Timestamp,
  /** The last review-state change (the publication time until one). */
  updatedAt: Timestamp
}) {}

export class MiniAppReviewList extends Schema.Class<MiniAppReviewList>("MiniAppReviewList")({
  items: Schema.Array(MiniAppReviewEntry)
}) {}

/** A report about a package's content. */
export class MiniAppReport extends Schema.Class<MiniAppReport>("MiniAppReport")({
  id: Schema.String,
  packageId: Schema.String,
  reason: Schema.String,
  detail: Schema.NullOr(Schema.String),
  createdAt: Timestamp
}) {}

/** Body of POST /mini-apps/{packageId}/report. */
export const MiniAppReportRequest = closedStruct({
  reason: Schema.String.check(Schema.isBetweenCodePoints(1, MINI_APP_REPORT_REASON_MAX)),
  detail: Schema.optionalKey(Schema.String.check(Schema.isBetweenCodePoints(1, MINI_APP_REPORT_DETAIL_MAX)))
}).annotate({ identifier: "MiniAppReportRequest" })
export type MiniAppReportRequest = typeof MiniAppReportRequest.Type

/** One package in the export: the package record, its review data and its reports. */
export class MiniAppExportEntry extends Schema.Class<MiniAppExportEntry>("MiniAppExportEntry")({
  package: MiniAppPackage,
  reportCount: Schema.Int,
  lastOfferedAt: Schema.NullOr(Timestamp),
  updatedAt: Timestamp,
  reports: Schema.Array(MiniAppReport)
}) {}

/** GET /mini-apps/export: every package of the account, whatever its state. */
export class MiniAppExport extends Schema.Class<MiniAppExport>("MiniAppExport")({
  userId: Schema.String,
  exportedAt: Timestamp,
  packages: Schema.Array(MiniAppExportEntry)
}) {}

/** The answer of an offer. */
export class MiniAppOffer extends Schema.Class<MiniAppOffer>("MiniAppOffer")({
  packageId: Schema.String,
  /** What the push opens; nothing is installed until the person does. */
  installUrl: Schema.String,
  offeredAt: Timestamp,
  /** The owner's active devices the offer was queued for. */
  devices: Schema.Int,
  /** Of those, the ones whose push provider accepted before the answer (the rest are retried). */
  accepted: Schema.Int
}) {}

const concealment = "Another account's package, or an unknown id, answers 404."
const stateTable = "Transitions: personal-only → blocked | disabled | removed; disabled → blocked | removed; blocked → " +
  "removed. Blocking a blocked package or disabling a disabled one answers it unchanged (200); disabling a blocked " +
  "package answers 409 `CONFLICT` (a block is not softened); `removed` is final: any action on a removed package " +
  "answers 409."

export class MiniAppReviewGroup extends HttpApiGroup.make("miniAppReview")
  .add(
    HttpApiEndpoint.get("review", "/mini-apps/review", { success: MiniAppReviewList }).pipe(agentOperation({
      summary: "Review the account's mini-app packages",
      description: "Private metadata of every package of the account, newest first, whatever its `reviewState` " +
        "(removed ones too): app id, name, version, state, how many reports it has and when it was last offered.",
      scopes: ["apps:read"]
    })),
    HttpApiEndpoint.get("export", "/mini-apps/export", { success: MiniAppExport }).pipe(agentOperation({
      summary: "Export the account's mini-app package metadata",
      description: "A download (`Content-Disposition: attachment; filename=\"mini-apps-export.json\"`) of the " +
        "metadata of every package of the account, newest first, whatever its state: the package record " +
        "(MiniAppPackage, manifest included), report count, last offer, last state change and every report. The " +
        "archives themselves are not included (GET /mini-apps/{packageId}/archive).",
      scopes: ["apps:read"]
    })),
    HttpApiEndpoint.post("offer", "/mini-apps/:packageId/offer", {
      params: { packageId: PackageId },
      success: MiniAppOffer,
      error: [NotFound, Conflict, RateLimited]
    }).pipe(agentOperation({
      summary: "Offer a package to the owner's devices",
      description: "An explicit push of the package's availability to the owner's active devices only (never another " +
        "account's, never a team's). It never installs anything: the push carries `packageId` and `installUrl` " +
        "(its `herald` data, and the alert's link) and the person decides. At most one offer a minute per package: " +
        "an earlier one within the minute answers 429 `RATE_LIMITED` with `Retry-After` (seconds); concurrent offers " +
        "send one push. Only an installable (`personal-only`) package may be offered: blocked, disabled or removed " +
        "answers 409 `CONFLICT`. " + concealment,
      scopes: ["apps:write"],
      sends: true
    })),
    HttpApiEndpoint.post("report", "/mini-apps/:packageId/report", {
      params: { packageId: PackageId },
      payload: MiniAppReportRequest,
      success: MiniAppReport.pipe(HttpApiSchema.status(201)),
      error: [NotFound, Conflict, LimitReached]
    }).pipe(agentOperation({
      summary: "Report a package's content",
      description: `Records a report about an owned package's content: \`reason\` 1–${MINI_APP_REPORT_REASON_MAX} ` +
        `characters, optional \`detail\` 1–${MINI_APP_REPORT_DETAIL_MAX}; answers 201 with the report. The review ` +
        `list counts it. A package keeps at most ${MINI_APP_MAX_REPORTS} reports (422 \`LIMIT_REACHED\`). A removed ` +
        "package answers 409 `CONFLICT`. " + concealment,
      scopes: ["apps:write"]
    })),
    HttpApiEndpoint.post("block", "/mini-apps/:packageId/block", {
      params: { packageId: PackageId },
      success: MiniAppPackage,
      error: [NotFound, Conflict]
    }).pipe(agentOperation({
      summary: "Block a package",
      description: "Moves the package to `blocked` and answers it: it is no longer listed, installable or offered. " +
        stateTable + " " + concealment,
      scopes: ["apps:write"]
    })),
    HttpApiEndpoint.post("disable", "/mini-apps/:packageId/disable", {
      params: { packageId: PackageId },
      success: MiniAppPackage,
      error: [NotFound, Conflict]
    }).pipe(agentOperation({
      summary: "Disable a package",
      description: "Moves the package to `disabled` and answers it: it is no longer listed, installable or offered. " +
        stateTable + " " + concealment,
      scopes: ["apps:write"]
    })),
    HttpApiEndpoint.delete("remove", "/mini-apps/:packageId", {
      params: { packageId: PackageId },
      success: MiniAppPackage,
      error: [NotFound, Conflict]
    }).pipe(agentOperation({
      summary: "Remove a package from the catalog",
      description: "Moves the package to `removed` (final) and answers it. The package stays in review and export " +
        "(packages are immutable) but is no longer readable, listed, installable or offered. " + stateTable + " " +
        concealment,
      scopes: ["apps:write"]
    }))
  )
  .middleware(AgentAuth)
  // Encode with checks on, as group "miniApps" does: the API's `disableChecks` skips closedStruct's key filter
  // (domain/Common.ts), and every manifest field would then be taken for an extra one.
  .annotate(HttpApi.SuccessParseOptions, {})
{}
