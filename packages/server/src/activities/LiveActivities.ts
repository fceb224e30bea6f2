/**
 * The live-activities capability's rules: starting (capacity, keys,
 * replacement), updating and ending through each activity's entity, the
 * phone's update tokens, and a prompt's interactive card (started with the
 * prompt, ended when it ends). A sweep flushes activities whose queued work
 * was left due (by a restart, or an actor that stopped), after giving up the
 * claims of processes that died mid-send.
 */
import {
  ActivityCapacityExceeded,
  ActivityKeyConflict,
  ActivityPayloadTooLarge,
  Conflict,
  LiveActivityList,
  LiveActivityMutation,
  NoLiveActivityDevice,
  NotFound
} from "@herald/api"
import type { ActivityEnded, AgentPrincipal, Interaction, LiveActivity, StartActivityRequest, UpdateActivityRequest } from "@herald/api"
import { Clock, Context, Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { clusterFailuresAreDefects } from "../cluster/Failures.ts"
import { makeId } from "../lib/Ids.ts"
import { Outbox } from "../push/Outbox.ts"
import type { PushMessage } from "../push/PushMessage.ts"
import { ActivityExpireAt, LiveActivityEntity } from "./ActivityEntity.ts"
import type { MutationOutcome } from "./ActivityEntity.ts"
import { checkPayloadSize, endMessage, liveActivityMessage, promptCardStart, promptCardState } from "./Cards.ts"
import { ActivitiesRepo, DEVICE_CAPACITY } from "./Repo.ts"
import type { NewActivity } from "./Repo.ts"
import { budgetWarnings } from "./TextBudgets.ts"

const SWEEP_INTERVAL = Duration.seconds(2)
/**
 * A running actor wakes itself for its paced and backed-off operations; the
 * sweep takes only work left due longer than this (after the first sweep,
 * which takes everything a restart left).
 */
const SWEEP_GRACE_MILLIS = 3_000
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
const capacityExceeded = new ActivityCapacityExceeded({
  error: `Every target device already shows ${DEVICE_CAPACITY} live activities.`,
  limit: DEVICE_CAPACITY
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
  readonly start: (agent: AgentPrincipal, input: StartActivityRequest) => Effect.Effect<
    LiveActivityMutation,
    NotFound | ActivityKeyConflict | ActivityCapacityExceeded | NoLiveActivityDevice | ActivityPayloadTooLarge
  >
  readonly update: (tokenId: string, identifier: string, input: UpdateActivityRequest) => Effect.Effect<
    LiveActivityMutation,
    NotFound | ActivityEnded | ActivityPayloadTooLarge | Conflict
  >
  readonly end: (tokenId: string, identifier: string) => Effect.Effect<LiveActivityMutation, NotFound | ActivityEnded | Conflict>
  readonly registerUpdateToken: (userId: string, activityId: string, deviceId: string, token: string) => Effect.Effect<void, NotFound>
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
}>()("herald/LiveActivities") {
  static readonly layerNoDeps = Layer.effect(LiveActivities, Effect.gen(function*() {
    const repo = yield* ActivitiesRepo
    const sql = yield* SqlClient.SqlClient
    const client = yield* LiveActivityEntity.client
    const staleSeconds = Duration.toSeconds((yield* Outbox).staleClaim)
    const seconds = Effect.map(Clock.currentTimeMillis, (ms) => Math.floor(ms / 1000))

    const scheduleExpiry = (activityId: string, expiresAt: string) =>
      client(activityId).Expire(new ActivityExpireAt({ expiresAtMillis: Date.parse(expiresAt) }), { discard: true }).pipe(
        Effect.orDie
      )

    const flush = (activityId: string) =>
      client(activityId).Flush(undefined, { discard: true }).pipe(
        Effect.catchCause((cause) => Effect.logWarning("could not hand a live activity to its entity", cause))
      )

    const owners = new Map<string, { readonly tokenId: string; readonly promptCard: boolean }>()
    const located = (tokenId: string, identifier: string) => {
      const known = owners.get(identifier)
      if (known?.tokenId === tokenId) return Effect.succeed({ id: identifier, promptCard: known.promptCard })
      return Effect.flatMap(repo.findId(tokenId, identifier), (found) => {
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
      Effect.map(repo.record(activityId), (activity) => {
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

    const targets = (userId: string, deviceIds: ReadonlyArray<string> | undefined) =>
      Effect.flatMap(repo.targets(userId, deviceIds), (ids) =>
        ids === undefined ? Effect.fail(new NotFound({ error: "Device not found." })) : Effect.succeed(ids))

    /**
     * One try of a start, in one transaction: a replacing start ends the
     * key's live activity (freeing its places) and starts the new one, or,
     * failing, leaves the old one as it was. Answers the activity it replaced.
     */
    const startOnce = (activity: NewActivity, deviceIds: ReadonlyArray<string>, replace: boolean, message: PushMessage) =>
      sql.withTransaction(Effect.gen(function*() {
        let replaced: string | undefined
        if (activity.key !== null && replace) {
          const live = yield* repo.lockForReplace(activity.tokenId, activity.key, deviceIds)
          const now = yield* seconds
          if (live !== undefined && (yield* repo.end(live, (a, props) => endMessage(a, props, now))) !== undefined) replaced = live
        }
        const started = yield* repo.start(activity, deviceIds, "start", () => message)
        if (started._tag === "Full") return yield* capacityExceeded
        return { full: started.full, replaced }
      })).pipe(Effect.catchTag("SqlError", Effect.die))

    const start = Effect.fn("LiveActivities.start")(function*(agent: AgentPrincipal, input: StartActivityRequest) {
      const deviceIds = yield* targets(agent.userId, input.deviceIds)
      if (deviceIds.length === 0) {
        return yield* new NoLiveActivityDevice({ error: "No active device of the account can show live activities." })
      }
      const key = input.key ?? null
      const replace = input.replace === true
      if (key !== null && !replace && (yield* repo.liveByKey(agent.tokenId, key)) !== undefined) return yield* keyConflict(key)
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
      const started = yield* startOnce(activity, deviceIds, replace, message).pipe(
        // A replacing start that lost the key to a concurrent start replaces that one.
        Effect.retry({ while: (e) => replace && e._tag === "KeyTaken", times: REPLACE_TRIES - 1 }),
        // Rolled back: a concurrent start took the key between the check above and this insert.
        Effect.catchTag("KeyTaken", () => Effect.fail(keyConflict(key ?? "")))
      )
      // The replaced activity's ends go first (its devices' places are now the new one's).
      if (started.replaced !== undefined) yield* client(started.replaced).Flush().pipe(Effect.catchTags(clusterFailuresAreDefects))
      yield* scheduleExpiry(id, expiresAt)
      yield* client(id).Flush().pipe(Effect.catchTags(clusterFailuresAreDefects))
      const o = yield* repo.outcomeOf(id, 1)
      return yield* mutation(id, { sequence: 1, apnsPriority: 10, priorityReason: "start", superseded: 0, ...o }, {
        replaced: started.replaced === undefined ? 0 : 1,
        failed: started.full.length
      })
    })

    const update = Effect.fn("LiveActivities.update")(function*(tokenId: string, identifier: string, input: UpdateActivityRequest) {
      const id = yield* changeable(tokenId, identifier)
      const o = yield* client(id).Update({ props: { ...input.props }, priority: input.priority ?? "default" }).pipe(
        Effect.catchTags(clusterFailuresAreDefects)
      )
      return yield* mutation(id, o)
    })

    const end = Effect.fn("LiveActivities.end")(function*(tokenId: string, identifier: string) {
      const id = yield* changeable(tokenId, identifier)
      const o = yield* client(id).End().pipe(Effect.catchTags(clusterFailuresAreDefects))
      return yield* mutation(id, o)
    })

    const registerUpdateToken = Effect.fn("LiveActivities.registerUpdateToken")(
      function*(userId: string, activityId: string, deviceId: string, token: string) {
        if (!(yield* repo.setUpdateToken(userId, activityId, deviceId, token))) return yield* notFound
        // The device's queued updates and end go now, in order.
        yield* client(activityId).Flush().pipe(Effect.catchTags(clusterFailuresAreDefects))
      }
    )

    const startPromptCard: LiveActivities["Service"]["startPromptCard"] = (activityId, interaction, owner, deviceIds) =>
      Effect.gen(function*() {
        const state = promptCardState(activityId, interaction)
        const timestampSeconds = yield* seconds
        const started = yield* repo.start(
          { id: activityId, userId: owner.userId, tokenId: owner.tokenId, key: null, interactionId: interaction.id, props: state, expiresAt: interaction.expiresAt },
          deviceIds,
          "interaction",
          () => promptCardStart(activityId, interaction, state, timestampSeconds)
        )
        if (started._tag === "Full") return yield* capacityExceeded
        return started.started.length
      }).pipe(
        // A prompt card has no key: no start can take it first.
        Effect.catchTag("KeyTaken", Effect.die)
      )

    const endPromptCard = (interaction: Interaction) =>
      Effect.gen(function*() {
        const now = yield* seconds
        return yield* repo.endForInteraction(interaction.id, (activityId) =>
          liveActivityMessage({
            activityId,
            event: "end",
            state: promptCardState(activityId, interaction),
            priority: 10,
            timestampSeconds: now,
            // The outcome stays readable on the lock screen for a minute.
            dismissalDate: now + 60
          }))
      })

    // Expiry timers of live activities whose start was cut short before its
    // timer was stored (a crash): scheduled at start.
    yield* Effect.forkScoped(
      Effect.flatMap(repo.liveDeadlines, (rows) =>
        Effect.forEach(rows, (r) => scheduleExpiry(r.id, r.expiresAt), { concurrency: 16, discard: true })).pipe(
        Effect.catchCause((cause) => Effect.logWarning("could not reschedule live activity expiry timers", cause))
      )
    )

    yield* Effect.forkScoped(
      Effect.gen(function*() {
        let grace = 0
        while (true) {
          const released = yield* repo.releaseDeadClaims(staleSeconds)
          const due = yield* repo.withQueuedWork(grace)
          yield* Effect.forEach(new Set([...released, ...due]), flush, { discard: true })
          grace = SWEEP_GRACE_MILLIS
          yield* Effect.sleep(SWEEP_INTERVAL)
        }
      }).pipe(
        Effect.catchCause((cause) => Effect.logWarning("live activity sweep failed; retrying", cause)),
        Effect.andThen(Effect.sleep(SWEEP_INTERVAL)),
        Effect.forever
      )
    )

    return LiveActivities.of({
      list: (tokenId) =>
        Effect.map(repo.list(tokenId, LIST_LIMIT), (items) => new LiveActivityList({ items }, { disableChecks: true })),
      get: (tokenId, identifier) => Effect.flatMap(found(tokenId, identifier), repo.record),
      start,
      update,
      end,
      registerUpdateToken,
      startPromptCard,
      endPromptCard,
      flush,
      cardStarted: (activityId, expiresAt) => Effect.andThen(scheduleExpiry(activityId, expiresAt), flush(activityId))
    })
  }))
}
