/**
 * The review side of mini-app packages: the owner's review list and export,
 * review-state transitions (the table in `@herald/api` MiniAppReview.ts),
 * reports, and offers (a push of availability to the owner's own devices,
 * one a minute per package).
 *
 * A transition locks the package row, decides from its state, then writes,
 * all in one transaction, so concurrent transitions apply one by one. An
 * offer stamps `last_offered_at` with one conditional UPDATE in the same
 * transaction that enqueues its receipts: of concurrent offers only one
 * stamps and pushes; the pushes are sent right after the commit.
 */
import {
  Conflict,
  LimitReached,
  MINI_APP_MAX_REPORTS,
  MINI_APP_OFFER_INTERVAL_SECONDS,
  MiniAppExport,
  MiniAppExportEntry,
  MiniAppOffer,
  MiniAppReport,
  MiniAppReviewEntry,
  NotFound
} from "@herald/api"
import type { MiniAppPackage, MiniAppReportRequest, MiniAppReviewState } from "@herald/api"
import { Clock, Context, Data, Effect, Layer, Option } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { checkLimit } from "../db/AccountLocks.ts"
import { DeviceTargeting } from "../identity/DeviceTargeting.ts"
import { makeId } from "../lib/Ids.ts"
import { alertMessage } from "../push/Alerts.ts"
import { Outbox } from "../push/Outbox.ts"
import { packageRecord } from "./PackagesRepo.ts"
import { ReviewRepo } from "./ReviewRepo.ts"
import type { StateRow } from "./ReviewRepo.ts"

/** An offer within the package's minute; `retryAfterMs` until the next is allowed. */
export class OfferThrottled extends Data.TaggedError("OfferThrottled")<{ readonly retryAfterMs: number }> {}

export type Transition = "block" | "disable" | "remove"

const target: Record<Transition, MiniAppReviewState> = { block: "blocked", disable: "disabled", remove: "removed" }

/**
 * What `action` does from `from`: the new state, or the refusal. Same state
 * for block and disable answers the package unchanged (idempotent).
 */
export const nextState = (from: MiniAppReviewState, action: Transition): MiniAppReviewState | "conflict" => {
  if (from === "removed") return "conflict"
  if (action === "disable" && from === "blocked") return "conflict"
  return target[action]
}

const notFound = new NotFound({ error: "Package not found." })
const OFFER_MS = MINI_APP_OFFER_INTERVAL_SECONDS * 1000

export class Review extends Context.Service<Review, {
  readonly review: (userId: string) => Effect.Effect<ReadonlyArray<MiniAppReviewEntry>>
  readonly exportAll: (userId: string) => Effect.Effect<MiniAppExport>
  readonly transition: (userId: string, packageId: string, action: Transition) => Effect.Effect<MiniAppPackage, NotFound | Conflict>
  readonly report: (userId: string, packageId: string, input: MiniAppReportRequest) => Effect.Effect<MiniAppReport, NotFound | Conflict | LimitReached>
  readonly offer: (userId: string, packageId: string) => Effect.Effect<MiniAppOffer, NotFound | Conflict | OfferThrottled>
}>()("herald/Review") {
  static readonly layerNoDeps = Layer.effect(Review, Effect.gen(function*() {
    const repo = yield* ReviewRepo
    const outbox = yield* Outbox
    const targeting = yield* DeviceTargeting
    const { publicUrl } = yield* AppConfig
    const toPackage = packageRecord(publicUrl)

    const locked = (userId: string, packageId: string) =>
      Effect.flatMap(repo.lock(userId, packageId), Option.match({
        onNone: () => Effect.fail(notFound),
        onSome: (row): Effect.Effect<StateRow> => Effect.succeed(row)
      }))

    const review = (userId: string) =>
      Effect.map(repo.list(userId), (rows) =>
        rows.map((row) =>
          new MiniAppReviewEntry({
            packageId: row.id,
            appId: row.manifest.appId,
            name: row.manifest.name,
            version: row.manifest.version,
            reviewState: row.reviewState,
            reportCount: row.reportCount,
            lastOfferedAt: row.lastOfferedAt,
            createdAt: row.createdAt,
            updatedAt: row.updatedAt
          })
        ))

    const exportAll = (userId: string) =>
      Effect.gen(function*() {
        const exportedAt = new Date(yield* Clock.currentTimeMillis).toISOString()
        const [rows, reports] = yield* repo.inTransaction(Effect.all([repo.list(userId), repo.reports(userId)]))
        return new MiniAppExport({
          userId,
          exportedAt,
          packages: rows.map((row) =>
            new MiniAppExportEntry({
              package: toPackage(row),
              reportCount: row.reportCount,
              lastOfferedAt: row.lastOfferedAt,
              updatedAt: row.updatedAt,
              reports: reports.filter((r) => r.packageId === row.id)
            })
          )
        })
      })

    const transition = (userId: string, packageId: string, action: Transition) =>
      repo.inTransaction(Effect.gen(function*() {
        const { reviewState } = yield* locked(userId, packageId)
        const next = nextState(reviewState, action)
        if (next === "conflict") {
          return yield* new Conflict({
            error: reviewState === "removed"
              ? "The package was removed; removal is final."
              : `A ${reviewState} package cannot be ${target[action]}.`
          })
        }
        const row = next === reviewState
          ? Option.getOrThrow(yield* repo.get(userId, packageId))
          : yield* repo.setState(userId, packageId, next)
        return toPackage(row)
      }))

    const report = (userId: string, packageId: string, input: MiniAppReportRequest) =>
      repo.inTransaction(Effect.gen(function*() {
        const { reportCount, reviewState } = yield* locked(userId, packageId)
        if (reviewState === "removed") return yield* new Conflict({ error: "The package was removed; removal is final." })
        // Counted under the package's row lock (`locked`).
        yield* checkLimit({
          count: Effect.succeed(reportCount),
          limit: MINI_APP_MAX_REPORTS,
          error: `The package already has ${MINI_APP_MAX_REPORTS} reports.`
        })
        return yield* repo.insertReport({
          id: yield* makeId("mrep"),
          packageId,
          userId,
          reason: input.reason,
          detail: input.detail ?? null,
          createdAt: new Date(yield* Clock.currentTimeMillis).toISOString()
        })
      }))

    /** Why an offer did not stamp: unknown (404), not installable (409), or within the minute (429). */
    const refusal = (userId: string, packageId: string, now: number) =>
      Effect.flatMap(repo.get(userId, packageId), (row): Effect.Effect<never, NotFound | Conflict | OfferThrottled> => {
        if (Option.isNone(row)) return Effect.fail(notFound)
        const { lastOfferedAt, reviewState } = row.value
        if (reviewState !== "personal-only") {
          return Effect.fail(new Conflict({ error: `A ${reviewState} package cannot be offered.` }))
        }
        const next = lastOfferedAt === null ? now : Date.parse(lastOfferedAt) + OFFER_MS
        return Effect.fail(new OfferThrottled({ retryAfterMs: Math.max(1000, next - now) }))
      })

    const offer = (userId: string, packageId: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const offeredAt = new Date(now).toISOString()
        const notBefore = new Date(now - OFFER_MS).toISOString()
        const devices = yield* targeting.targets(userId).pipe(Effect.orDie)
        const sent = yield* repo.inTransaction(Effect.gen(function*() {
          if (!(yield* repo.stampOffer(userId, packageId, offeredAt, notBefore))) return Option.none()
          const row = Option.getOrThrow(yield* repo.get(userId, packageId))
          const pkg = toPackage(row)
          const message = alertMessage({
            ref: `mini-app:${packageId}`,
            collapseId: packageId,
            title: `${row.manifest.name} is available`,
            body: `Version ${row.manifest.version} is ready. Open to review it; nothing is installed until you choose to.`,
            url: pkg.installUrl,
            imageUrl: null,
            threadId: null,
            data: { kind: "mini-app-offer", packageId, installUrl: pkg.installUrl }
          })
          const receipts = yield* outbox.toDevices({ devices, origin: "mini-app", itemId: packageId, purpose: "alert", message }, { sendNow: true })
          return Option.some({ pkg, receipts })
        }))
        if (Option.isNone(sent)) return yield* refusal(userId, packageId, now)
        const { pkg, receipts } = sent.value
        // Committed: the pushes go now even if the caller goes away (the worker retries what fails).
        const summary = yield* outbox.sendCommitted(receipts)
        return new MiniAppOffer({
          packageId,
          installUrl: pkg.installUrl,
          offeredAt,
          devices: receipts.length,
          accepted: summary.accepted
        })
      })

    return Review.of({ review, exportAll, transition, report, offer })
  }))

  static readonly layer = Review.layerNoDeps.pipe(Layer.provide(ReviewRepo.layer))
}
