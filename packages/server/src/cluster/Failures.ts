/**
 * The actor runtime failing to deliver a message (mailbox full, storage down,
 * shard moving) is the server's fault, not the caller's: handled as a defect
 * (500), with `Effect.catchTags(clusterFailuresAreDefects)`.
 */
import { Effect } from "effect"

export const clusterFailuresAreDefects = {
  MailboxFull: Effect.die,
  AlreadyProcessingMessage: Effect.die,
  PersistenceError: Effect.die,
  EntityNotAssignedToRunner: Effect.die
} as const
