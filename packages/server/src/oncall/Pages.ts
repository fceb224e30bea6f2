/**
 * The pages capability's rules. Creating a page commits the page (or the
 * absorption into an open page with the same dedup key), step 0's paging of
 * the on-call person and the audit entry in one transaction, then stores one
 * durable timer per escalation step on the page's entity and sends the
 * pushes. Everything that changes a page afterwards — a step's timer,
 * acknowledge, escalate, resolve — goes through that entity.
 *
 * Access: any member of the page's team may page its groups, read, resolve,
 * acknowledge and escalate its pages; anyone else is answered 404, as if the
 * page (or group) did not exist.
 */
import { BadRequest, NotFound, OncallPage, OncallPageList, PageCreated, PageDeduplicated, PERSON_PAGES_LISTED, PersonPageList } from "@herald/api"
import type { AgentPrincipal, Conflict, PagesQuery, PageStatus, PersonPagesQuery, ServiceUnavailable } from "@herald/api"
import { Clock, Context, Duration, Effect, Layer } from "effect"
import { AppAccess } from "../apps/AppAccess.ts"
import { Deadline } from "../cluster/Deadline.ts"
import { OncallConfig } from "../config/OncallConfig.ts"
import * as EntityCalls from "../cluster/EntityCalls.ts"
import { makeId } from "../lib/Ids.ts"
import type { AuditActor } from "../teams/AuditTrail.ts"
import { AuditTrail } from "../teams/AuditTrail.ts"
import { Membership } from "../teams/Membership.ts"
import { Page, stepKey } from "./PageProtocol.ts"
import { GroupsRepo } from "./GroupsRepo.ts"
import { PagesRepo } from "./PagesRepo.ts"
import type { PageState } from "./PagesRepo.ts"
import { notFound, PageSteps, targetsOf } from "./PageSteps.ts"

const groupNotFound = new NotFound({ error: "On-call group not found." })
const badCursor = new BadRequest({ error: "Invalid cursor: pass `nextCursor` back unchanged." })

/** decisions.md: the default and largest page of GET /teams/{id}/pages. */
const DEFAULT_LIMIT = 50

/** The cursor names the last page listed (ids sort by time); it is opaque to callers. */
const cursorOf = (id: string) => Buffer.from(`p:${id}`).toString("base64url")
const openCursor = (cursor: string): string | undefined => {
  const text = Buffer.from(cursor, "base64url").toString()
  return /^p:page_[0-9A-Za-z]{1,64}$/.test(text) ? text.slice(2) : undefined
}

export interface PageInput {
  readonly title: string
  readonly body?: string | null | undefined
  readonly url?: string | null | undefined
  readonly appId?: string | undefined
  readonly dedupKey?: string | undefined
}

/** Who a page is created for without a token (a silent service's dead-man's switch: watch/WatchAlerts.ts). */
export interface PageCreator {
  readonly userId: string
  readonly tokenId: null
}

export type PageOutcomeValue = PageCreated | PageDeduplicated

export class Pages extends Context.Service<Pages, {
  /** Pages the group (`dedupKey` falls back to `idempotencyKey`): 201 created or 200 absorbed. */
  readonly create: (
    agent: Pick<AgentPrincipal, "userId" | "tokenId"> | PageCreator,
    actor: AuditActor,
    groupId: string,
    input: PageInput,
    idempotencyKey: string | undefined
  ) => Effect.Effect<PageOutcomeValue, NotFound | ServiceUnavailable>
  readonly list: (userId: string, teamId: string, query: PagesQuery) => Effect.Effect<OncallPageList, NotFound | BadRequest>
  readonly get: (userId: string, id: string) => Effect.Effect<OncallPage, NotFound>
  readonly resolve: (actor: AuditActor & { readonly userId: string }, id: string) => Effect.Effect<OncallPage, NotFound | ServiceUnavailable>
  readonly acknowledge: (actor: AuditActor & { readonly userId: string }, id: string) => Effect.Effect<OncallPage, NotFound | Conflict | ServiceUnavailable>
  readonly escalate: (actor: AuditActor & { readonly userId: string }, id: string) => Effect.Effect<OncallPage, NotFound | Conflict | ServiceUnavailable>
  /** Open pages that notified the person (GET /oncall/me). */
  readonly openFor: (userId: string) => Effect.Effect<ReadonlyArray<OncallPage>>
  /** Open pages of every team the person belongs to, which they may acknowledge or escalate (the console). */
  readonly openForMember: (userId: string, query: PersonPagesQuery) => Effect.Effect<PersonPageList>
  /**
   * Stores the step timers of every triggered page (a crash between a page's
   * commit and its timers): each is keyed per step, so one already stored is
   * left as it is. Run at start.
   */
  readonly rescheduleDeadlines: Effect.Effect<void, ServiceUnavailable>
}>()("herald/Pages") {
  static readonly layerNoDeps = Layer.effect(Pages, Effect.gen(function*() {
    const repo = yield* PagesRepo
    const groups = yield* GroupsRepo
    const steps = yield* PageSteps
    const membership = yield* Membership
    const audit = yield* AuditTrail
    const apps = yield* AppAccess
    const page = yield* Page.client
    const oncallConfig = yield* OncallConfig

    /** One persisted timer per escalation step, at `createdAt + afterMinutes` (× `HERALD_ONCALL_TIME_SCALE`). */
    const scheduleSteps = (id: string, createdAt: string, escalation: ReadonlyArray<{ readonly afterMinutes: number }>) =>
      Effect.forEach(escalation, (step, i) =>
        EntityCalls.call(page(id).Step(Deadline.at(Date.parse(createdAt) + Duration.toMillis(oncallConfig.stepDelay(step.afterMinutes)), stepKey(i + 1)), { discard: true })),
        { discard: true })

    /** The page when the person is a member of its team, else 404. */
    const visible = (userId: string, id: string) =>
      Effect.gen(function*() {
        const state = yield* repo.state(id)
        if (state === undefined || (yield* membership.standing(userId, state.teamId)) === undefined) return yield* notFound
        return state
      })

    const create = Effect.fn("Pages.create")(function*(
      agent: Pick<AgentPrincipal, "userId" | "tokenId"> | PageCreator,
      actor: AuditActor,
      groupId: string,
      input: PageInput,
      idempotencyKey: string | undefined
    ) {
      const now = yield* Clock.currentTimeMillis
      const createdAt = new Date(now).toISOString()
      const group = yield* groups.find(groupId, createdAt)
      if (group === undefined || (yield* membership.standing(agent.userId, group.teamId)) === undefined) return yield* groupNotFound
      yield* apps.requireVisible(agent.userId, input.appId)
      const id = yield* makeId("page")
      const row = {
        id,
        teamId: group.teamId,
        groupId,
        groupName: group.name,
        title: input.title,
        body: input.body ?? null,
        url: input.url ?? null,
        appId: input.appId ?? null,
        dedupKey: input.dedupKey ?? idempotencyKey ?? null,
        createdBy: agent.userId,
        tokenId: agent.tokenId,
        createdAt
      }
      // From the write on, the request runs to its end: the timers must be stored and the pushes sent.
      return yield* Effect.gen(function*() {
        const outcome = yield* repo.inTransaction(Effect.gen(function*() {
          const absorbed = yield* repo.insertOrAbsorb(row)
          if (!absorbed.inserted) return { id: absorbed.id, receipts: undefined }
          const state: PageState = { ...row, status: "triggered", step: 0 }
          const targets = targetsOf(group, 0, now)
          const receipts = yield* steps.notify(state, group.name, 0, targets, createdAt)
          yield* audit.record(actor, {
            teamId: group.teamId,
            action: "page.created",
            targetType: "page",
            targetId: id,
            metadata: { groupId, title: input.title, dedupKey: row.dedupKey, notified: targets }
          })
          return { id, receipts }
        }))
        if (outcome.receipts !== undefined) {
          yield* scheduleSteps(id, createdAt, group.escalation)
          yield* steps.send(outcome.receipts)
        }
        const record = yield* repo.record(outcome.id)
        if (record === undefined) return yield* notFound
        return outcome.receipts === undefined
          ? new PageDeduplicated({ page: record, deduplicated: true })
          : new PageCreated({ page: record, deduplicated: false })
      }).pipe(Effect.uninterruptible)
    })

    const list = Effect.fn("Pages.list")(function*(userId: string, teamId: string, query: PagesQuery) {
      yield* membership.require(userId, teamId, "member").pipe(Effect.catchTag("Forbidden", () => Effect.die("a member is never refused")))
      const before = query.cursor === undefined ? undefined : openCursor(query.cursor)
      if (query.cursor !== undefined && before === undefined) return yield* badCursor
      const limit = query.limit ?? DEFAULT_LIMIT
      const items = yield* repo.list(teamId, query.status as PageStatus | undefined, before, limit + 1)
      const shown = items.slice(0, limit)
      return new OncallPageList({
        items: shown,
        nextCursor: items.length > limit ? cursorOf(shown[shown.length - 1]!.id) : null
      })
    })

    const get = Effect.fn("Pages.get")(function*(userId: string, id: string) {
      yield* visible(userId, id)
      const record = yield* repo.record(id)
      return record ?? (yield* notFound)
    })

    const resolve = Effect.fn("Pages.resolve")(function*(actor: AuditActor & { readonly userId: string }, id: string) {
      yield* visible(actor.userId, id)
      return yield* EntityCalls.call(page(id).Resolve({ actor }))
    })

    const acknowledge = Effect.fn("Pages.acknowledge")(function*(actor: AuditActor & { readonly userId: string }, id: string) {
      yield* visible(actor.userId, id)
      return yield* EntityCalls.call(page(id).Acknowledge({ actor }))
    })

    const escalate = Effect.fn("Pages.escalate")(function*(actor: AuditActor & { readonly userId: string }, id: string) {
      yield* visible(actor.userId, id)
      return yield* EntityCalls.call(page(id).Escalate({ actor }))
    })

    const rescheduleDeadlines = Effect.gen(function*() {
      const open = yield* repo.open
      yield* Effect.forEach(open, (p) =>
        p.groupId === null ? Effect.void : Effect.flatMap(groups.find(p.groupId), (group) =>
          group === undefined ? Effect.void : scheduleSteps(p.id, p.createdAt, group.escalation)), { concurrency: 16, discard: true })
    }).pipe(Effect.withSpan("Pages.rescheduleDeadlines"))

    const openForMember = Effect.fn("Pages.openForMember")(function*(userId: string, query: PersonPagesQuery) {
      const statuses: ReadonlyArray<PageStatus> = query.status === undefined || query.status === "open"
        ? ["triggered", "acknowledged"]
        : [query.status]
      return new PersonPageList({ items: yield* repo.openOfMember(userId, statuses, query.limit ?? PERSON_PAGES_LISTED) })
    })

    return Pages.of({ create, list, get, resolve, acknowledge, escalate, openFor: repo.openFor, openForMember, rescheduleDeadlines })
  }))

  /** With its step rules (the entity, `PageLive`, and the cluster come from the runtime). */
  static readonly layer = Pages.layerNoDeps.pipe(
    Layer.provideMerge(PageSteps.layer),
    Layer.provideMerge(Layer.mergeAll(PagesRepo.layer, GroupsRepo.layer))
  )
}
