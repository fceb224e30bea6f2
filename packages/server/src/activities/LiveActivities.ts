/**
 * The live-activities capability's agent rules: starting (target devices,
 * capacity, keys, replacement), updating and ending through each activity's
 * entity, and the phone's update tokens. A prompt's interactive card is
 * PromptCards.ts; the sweep of work left due is Sweeper.ts (run by a worker,
 * runtime/Workers.ts). Starts and ends are recorded in the activity feed.
 */
import {
  ActivityKeyConflict,
  Conflict,
  LiveActivityList,
  LiveActivityMutation,
  NoLiveActivityDevice,
  NotFound,
  PERSON_ACTIVITIES_LISTED,
  PersonLiveActivity,
  PersonLiveActivityList
} from "@herald/api"
import type {
  ActivityCapacityExceeded,
  ActivityEnded,
  ActivityPayloadTooLarge,
  AgentPrincipal,
  Interaction,
  LiveActivity,
  ServiceUnavailable,
  StartActivityRequest,
  UpdateActivityRequest
} from "@herald/api"
import { Clock, Context, Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import * as EntityCalls from "../cluster/EntityCalls.ts"
import { DeviceTargeting } from "../identity/DeviceTargeting.ts"
import { ActivityFeed } from "../inbox/ActivityFeed.ts"
import { makeId } from "../lib/Ids.ts"
import type { PushMessage } from "../push/PushMessage.ts"
import type { MutationOutcome } from "./ActivityProtocol.ts"
import { makeActorCalls } from "./ActorCalls.ts"
import { capacityExceeded } from "./Capacity.ts"
import { checkPayloadSize, endMessage, liveActivityMessage } from "./Cards.ts"
import { concludeEntry, startedEntry } from "./FeedEntries.ts"
import { LifecycleRepo } from "./LifecycleRepo.ts"
import { makePromptCards } from "./PromptCards.ts"
import { ReadModelRepo } from "./ReadModelRepo.ts"
import { REFRESH_MILLIS, ResidentActivities } from "./ResidentActivities.ts"
import type { NewActivity } from "./Rows.ts"
import { makeSweeper } from "./Sweeper.ts"
import { budgetWarnings, textBudgets } from "./TextBudgets.ts"

/** Activity ids known to belong to a token (ownership never changes); bounded. */
const OWNER_CACHE_SIZE = 50_000
/** decisions.md: `expiresInSeconds` default. */
const DEFAULT_EXPIRY_SECONDS = 28_800
const LIST_LIMIT = 100
/**
 * Tries of a replacing start. Replacing starts of a key are serialized, so
 * one loses the key only to a plain start that took it meanwhile (and then
 * replaces that one).
 */
const REPLACE_TRIES = 5

const notFound = new NotFound({ error: "Live activity not found." })
const promptCardConflict = new Conflict({
  error: "This live activity is a prompt's card: it changes only with its prompt (answered, canceled or expired)."
})

const keyConflict = (key: string) =>
  new ActivityKeyConflict({ error: `A live activity with key "${key}" is still live; pass replace: true.` })

const describe = (o: { readonly accepted: number; readonly failed: number; readonly queued: number; readonly superseded?: number }) => {
  const parts = [`Accepted by ${o.accepted}, failed on ${o.failed}, ${o.queued} queued`]
  if ((o.superseded ?? 0) > 0) parts.push(`${o.superseded} unsent routine update${o.superseded === 1 ? "" : "s"} superseded`)
  return `${parts.join("; ")}.`
}

export class LiveActivities extends Context.Service<LiveActivities, {
  readonly list: (tokenId: string) => Effect.Effect<LiveActivityList>
  readonly get: (tokenId: string, identifier: string) => Effect.Effect<LiveActivity, NotFound>
  /** The person's activities from every source, live ones first, each with its card's text budgets. */
  readonly listForPerson: (userId: string) => Effect.Effect<PersonLiveActivityList>
  readonly start: (agent: AgentPrincipal, input: StartActivityRequest) => Effect.Effect<
    LiveActivityMutation,
    NotFound | ActivityKeyConflict | ActivityCapacityExceeded | NoLiveActivityDevice | ActivityPayloadTooLarge | ServiceUnavailable
  >
  readonly update: (tokenId: string, identifier: string, input: UpdateActivityRequest) => Effect.Effect<
    LiveActivityMutation,
    NotFound | ActivityEnded | ActivityPayloadTooLarge | Conflict | ServiceUnavailable
  >
  readonly end: (tokenId: string, identifier: string) => Effect.Effect<LiveActivityMutation, NotFound | ActivityEnded | Conflict | ServiceUnavailable>
  readonly registerUpdateToken: (userId: string, activityId: string, deviceId: string, token: string) => Effect.Effect<
    void,
    NotFound | ServiceUnavailable
  >
  /** Queues the prompt's card on the devices with room (in the caller's transaction); answers how many. */
  readonly startPromptCard: (
    activityId: string,
    interaction: Interaction,
    owner: { readonly userId: string; readonly tokenId: string },
    deviceIds: ReadonlyArray<string>
  ) => Effect.Effect<number, ActivityCapacityExceeded>
  /** Ends the prompt's card, if it has one (in the caller's transaction); answers its id. */
  readonly endPromptCard: (interaction: Interaction) => Effect.Effect<string | undefined>
  /** Sends what is due for the activity (after the commit). */
  readonly flush: (activityId: string) => Effect.Effect<void>
  /** After a prompt card's commit: its expiry timer (which also drops what is still queued then), and its first sends. */
  readonly cardStarted: (activityId: string, expiresAt: string) => Effect.Effect<void>
  /** One pass of the sweep (its worker runs it every couple of seconds). */
  readonly sweep: Effect.Effect<void>
  /** One pass storing the expiry timers a crash left unstored (its worker runs it at start). */
  readonly rescheduleExpiries: Effect.Effect<void>
}>()("herald/LiveActivities") {
  static readonly layerNoDeps = Layer.effect(LiveActivities, Effect.gen(function*() {
    const lifecycle = yield* LifecycleRepo
    const readModel = yield* ReadModelRepo
    const devices = yield* DeviceTargeting
    const feed = yield* ActivityFeed
    const resident = yield* ResidentActivities
    const { client, flush, scheduleExpiry } = yield* makeActorCalls
    const cards = yield* makePromptCards
    const sweeper = yield* makeSweeper

    const owners = new Map<string, { readonly tokenId: string; readonly promptCard: boolean }>()
    const located = (tokenId: string, identifier: string) => {
      const known = owners.get(identifier)
      if (known?.tokenId === tokenId) return Effect.succeed({ id: identifier, promptCard: known.promptCard })
      return Effect.flatMap(readModel.findId(tokenId, identifier), (found) => {
        if (found === undefined) return Effect.fail(notFound)
        if (owners.size >= OWNER_CACHE_SIZE) owners.clear()
        owners.set(found.id, { tokenId, promptCard: found.promptCard })
        return Effect.succeed(found)
      })
    }
    const found = (tokenId: string, identifier: string) => Effect.map(located(tokenId, identifier), (a) => a.id)
    // A prompt's card shows the prompt and its action digest: it changes only with the prompt.
    const changeable = (tokenId: string, identifier: string) =>
      Effect.flatMap(located(tokenId, identifier), (a) => a.promptCard ? Effect.fail(promptCardConflict) : Effect.succeed(a.id))

    const mutation = (activityId: string, o: MutationOutcome, extra: { readonly replaced?: number; readonly failed?: number } = {}) =>
      Effect.map(readModel.record(activityId), (activity) => {
        const warnings = budgetWarnings(activity.props)
        const failed = o.failed + (extra.failed ?? 0)
        return new LiveActivityMutation({
          activity,
          accepted: o.accepted,
          failed,
          apnsPriority: o.apnsPriority,
          priorityReason: o.priorityReason,
          queued: o.queued,
          superseded: o.superseded,
          ...(extra.replaced !== undefined ? { replaced: extra.replaced } : {}),
          message: describe({ ...o, failed }),
          ...(warnings.length > 0 ? { budgetWarnings: warnings } : {})
        }, { disableChecks: true })
      })

    /** The devices a start goes to: named (each the account's, else 404) or all, less those that cannot show a card. */
    const targets = (userId: string, deviceIds: ReadonlyArray<string> | undefined) =>
      Effect.map(devices.targets(userId, deviceIds), (found) =>
        found.filter((d) => d.active && d.liveActivitiesCapable).map((d) => d.id))

    /**
     * One try of a start, in one transaction with its feed entry: a replacing
     * start ends the key's live activity (freeing its places) and starts the
     * new one, or, failing, leaves the old one as it was. Answers the activity
     * it replaced.
     */
    const startOnce = (activity: NewActivity, deviceIds: ReadonlyArray<string>, replace: boolean, message: PushMessage, sourceName: string, now: number) =>
      lifecycle.transaction(Effect.gen(function*() {
        let replaced: string | undefined
        if (activity.key !== null && replace) {
          const live = yield* lifecycle.lockForReplace(activity.tokenId, activity.key, deviceIds)
          const nowSeconds = Math.floor((yield* Clock.currentTimeMillis) / 1000)
          const ended = live === undefined ? undefined : yield* lifecycle.end(live, (a, props) => endMessage(a, props, nowSeconds))
          if (ended !== undefined) {
            yield* concludeEntry(feed, ended.closed, "ended")
            replaced = live
          }
        }
        const started = yield* lifecycle.start(activity, deviceIds, "start", () => message)
        if (started._tag === "Full") return yield* capacityExceeded
        yield* feed.record(startedEntry(activity, sourceName, new Date(now).toISOString()))
        return { full: started.full, replaced }
      }))

    // Spans named once: `Effect.fn(name)` captures a stack trace on every call (docs/benchmarks.md).
    const start = Effect.fnUntraced(function*(agent: AgentPrincipal, input: StartActivityRequest) {
      const deviceIds = yield* targets(agent.userId, input.deviceIds)
      if (deviceIds.length === 0) {
        return yield* new NoLiveActivityDevice({ error: "No active device of the account can show live activities." })
      }
      const key = input.key ?? null
      const replace = input.replace === true
      if (key !== null && !replace && (yield* readModel.liveByKey(agent.tokenId, key)) !== undefined) return yield* keyConflict(key)
      const id = yield* makeId("act")
      const now = yield* Clock.currentTimeMillis
      const expiresAt = new Date(now + (input.expiresInSeconds ?? DEFAULT_EXPIRY_SECONDS) * 1000).toISOString()
      const props = { ...input.props }
      const message = liveActivityMessage({
        activityId: id,
        event: "start",
        state: props,
        priority: 10,
        timestampSeconds: Math.floor(now / 1000),
        alert: { title: String(props.title), body: String(props.status ?? props.subtitle ?? props.detail ?? "") },
        staleDate: Math.floor(Date.parse(expiresAt) / 1000)
      })
      yield* checkPayloadSize(message, "start", endMessage(id, props, Math.floor(now / 1000)))
      const activity = { id, userId: agent.userId, tokenId: agent.tokenId, key, interactionId: null, props, expiresAt }
      const sourceName = agent.tokenName
      const started = yield* startOnce(activity, deviceIds, replace, message, sourceName, now).pipe(
        // A replacing start that lost the key to a concurrent start replaces that one.
        Effect.retry({ while: (e) => replace && e._tag === "KeyTaken", times: REPLACE_TRIES - 1 }),
        // Rolled back: a concurrent start took the key between the check above and this insert.
        Effect.catchTag("KeyTaken", () => Effect.fail(keyConflict(key ?? "")))
      )
      // The replaced activity's ends go first (its devices' places are now the new one's).
      if (started.replaced !== undefined) yield* EntityCalls.call(client(started.replaced).Flush())
      yield* EntityCalls.call(scheduleExpiry(id, expiresAt))
      yield* EntityCalls.call(client(id).Flush())
      const o = yield* readModel.outcomeOf(id, 1)
      return yield* mutation(id, { sequence: 1, apnsPriority: 10, priorityReason: "start", superseded: 0, ...o }, {
        replaced: started.replaced === undefined ? 0 : 1,
        failed: started.full.length
      })
    }, Effect.withSpan("LiveActivities.start"))

    const update = Effect.fnUntraced(function*(tokenId: string, identifier: string, input: UpdateActivityRequest) {
      const id = yield* changeable(tokenId, identifier)
      const props = { ...input.props }
      const priority = input.priority ?? "default"
      // The actor resident here is called directly (ResidentActivities.ts); elsewhere, or when the
      // runtime has not seen it in use for a while, through the cluster.
      const actor = resident.get(id)
      if (actor === undefined || (yield* Clock.currentTimeMillis) - actor.messagedAt() >= REFRESH_MILLIS) {
        // One id per request: the cluster may deliver the message twice (a retry), the actor applies it once.
        return yield* mutation(id, yield* EntityCalls.call(client(id).Update({ props, priority, updateId: randomUUID() })))
      }
      const o = yield* actor.update(props, priority)
      // It stopped meanwhile: a wake-up it had set may be gone with it; its successor sends what is due.
      if (resident.get(id) !== actor) yield* flush(id)
      return yield* mutation(id, o)
    }, Effect.withSpan("LiveActivities.update"))

    const end = Effect.fnUntraced(function*(tokenId: string, identifier: string) {
      const id = yield* changeable(tokenId, identifier)
      const o = yield* EntityCalls.call(client(id).End())
      return yield* mutation(id, o)
    }, Effect.withSpan("LiveActivities.end"))

    const registerUpdateToken = Effect.fnUntraced(
      function*(userId: string, activityId: string, deviceId: string, token: string) {
        if (!(yield* lifecycle.setUpdateToken(userId, activityId, deviceId, token))) return yield* notFound
        // The device's queued updates and end go now, in order.
        yield* EntityCalls.call(client(activityId).Flush())
      },
      Effect.withSpan("LiveActivities.registerUpdateToken")
    )

    return LiveActivities.of({
      list: (tokenId) =>
        Effect.map(readModel.list(tokenId, LIST_LIMIT), (items) => new LiveActivityList({ items }, { disableChecks: true })),
      get: (tokenId, identifier) => Effect.flatMap(found(tokenId, identifier), readModel.record),
      listForPerson: (userId) =>
        Effect.map(readModel.listForUser(userId, PERSON_ACTIVITIES_LISTED), (items) =>
          new PersonLiveActivityList({
            items: items.map((activity) =>
              new PersonLiveActivity({
                ...activity,
                budgets: textBudgets(activity.props),
                budgetWarnings: budgetWarnings(activity.props)
              }, { disableChecks: true })
            )
          }, { disableChecks: true })),
      start,
      update,
      end,
      registerUpdateToken,
      startPromptCard: cards.start,
      endPromptCard: cards.end,
      flush: cards.flush,
      cardStarted: cards.started,
      sweep: sweeper.sweep,
      rescheduleExpiries: sweeper.rescheduleExpiries
    })
  }))
}
