/**
 * The one way a request talks to an entity: `EntityCalls.call(client(id).Answer(…))`.
 * The actor runtime failing to take a message — a full mailbox or the
 * runner's resident-entity cap (`ShardingConfig.maxResidentEntities`, which
 * `effect/cluster` also reports as `MailboxFull`), a message already being
 * processed, message storage down, this runner shutting down — is
 * momentary and not the caller's fault: it answers 503 `SERVICE_UNAVAILABLE`
 * with `Retry-After` (set by the edge on every 503, `http/Edge.ts`), never a
 * 500, and its cause is logged at Warning. The entity's own errors pass
 * through unchanged. An entity on another runner, or on a shard between
 * runners (one joined, left or died), is not such a failure: the runtime
 * forwards the call to the owner, retrying every `sendRetryInterval` while
 * the shard moves (cluster/Runner.ts).
 *
 * A long call parked on an entity (a prompt's long-poll) is made with
 * `callUntil`, which follows the entity when its shard changes hands.
 */
import { ServiceUnavailable } from "@herald/api"
import { Cause, Clock, Duration, Effect, Option } from "effect"
import { ClusterError } from "effect/cluster"

/** What an entity client fails with besides the entity's own errors. */
export type EntityCallFailure =
  | ClusterError.MailboxFull
  | ClusterError.AlreadyProcessingMessage
  | ClusterError.PersistenceError
  | ClusterError.EntityNotAssignedToRunner

export const isEntityCallFailure = (u: unknown): u is EntityCallFailure =>
  u instanceof ClusterError.MailboxFull || u instanceof ClusterError.AlreadyProcessingMessage ||
  u instanceof ClusterError.PersistenceError || u instanceof ClusterError.EntityNotAssignedToRunner

const unavailable = new ServiceUnavailable({ error: "The service is busy; try again shortly." })

const toUnavailable = (failure: EntityCallFailure) =>
  Effect.logWarning(`entity call failed in the cluster (${failure._tag}); answering 503`, failure).pipe(
    Effect.annotateLogs("entity", "address" in failure ? `${failure.address.entityType}/${failure.address.entityId}` : "storage"),
    Effect.andThen(Effect.fail(unavailable))
  )

/** An entity call (or send) whose cluster failures become 503 `SERVICE_UNAVAILABLE`. */
export const call = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, EntityCallFailure> | ServiceUnavailable, R> =>
  Effect.catchIf(
    self,
    (e: E): e is Extract<E, EntityCallFailure> => isEntityCallFailure(e),
    toUnavailable
  ) as Effect.Effect<A, Exclude<E, EntityCallFailure> | ServiceUnavailable, R>

/**
 * Whether an entity call was cut by its entity stopping under it. An rpc
 * annotated `ClusterSchema.InterruptOnTermination` is interrupted the moment
 * its entity stops because the entity's shard is leaving its runner (another
 * runner joined and takes it, or this one is shutting down), and the caller's
 * call ends with that interruption and nothing else. The caller's own
 * interruption (its client gone, its token ended) is never seen here: an
 * interrupted fiber skips every recovery handler.
 */
const isCutByHandover = (cause: Cause.Cause<unknown>): boolean => Cause.hasInterruptsOnly(cause)

/** Before a call cut by a handover is issued again: the runtime is moving the shard, and routes the new call itself. */
const HANDOVER_PAUSE = Duration.millis(100)

/**
 * The entity's own timeout (a long-poll's `timeoutMillis`) ends a call; this outer bound, a little later, ends
 * one the runtime held past the deadline (re-sent while the entity's runner died and its shard moved).
 */
const DEADLINE_GRACE = Duration.seconds(1)

/**
 * A long call (`call`, above) that survives its entity changing runners, up
 * to `deadline` (epoch milliseconds): `issue(remainingMillis)` makes the
 * call for what is left of the time; when a handover cuts it
 * (`isCutByHandover`), it is issued again, and the runtime routes it to the
 * shard's new owner (retrying while the shard is between runners). At the
 * deadline, cut or held there, it answers `onDeadline`, as the entity's own
 * timeout would. Every other failure passes through, the runtime's own as 503.
 */
export const callUntil = <A, E, R>(
  deadline: number,
  issue: (remainingMillis: number) => Effect.Effect<A, E, R>,
  onDeadline: A
): Effect.Effect<A, Exclude<E, EntityCallFailure> | ServiceUnavailable, R> => {
  const attempt: Effect.Effect<A, Exclude<E, EntityCallFailure> | ServiceUnavailable, R> = Effect.flatMap(
    Clock.currentTimeMillis,
    (now) =>
      now >= deadline ? Effect.succeed(onDeadline) : Effect.catchCauseIf(call(issue(deadline - now)), isCutByHandover, () =>
        Effect.logDebug("entity call cut by its shard changing runners; issuing it again").pipe(
          Effect.andThen(Effect.sleep(HANDOVER_PAUSE)),
          Effect.andThen(attempt)
        ))
  )
  return Effect.flatMap(Clock.currentTimeMillis, (now) =>
    attempt.pipe(
      Effect.timeoutOption(Duration.sum(Duration.millis(Math.max(0, deadline - now)), DEADLINE_GRACE)),
      Effect.map(Option.getOrElse(() => onDeadline))
    ))
}
