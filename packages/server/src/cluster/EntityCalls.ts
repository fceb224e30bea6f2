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
 */
import { ServiceUnavailable } from "@herald/api"
import { Effect } from "effect"
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
