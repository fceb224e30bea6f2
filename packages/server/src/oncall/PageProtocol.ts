/**
 * The message protocol of a page's actor: an `effect/cluster` entity keyed by
 * the page id. Callers (the pages service) import this module only and call
 * through `cluster/EntityCalls.ts`; the behaviour is `PageBehaviour.ts`, which
 * only the runtime's layer graph imports.
 *
 * Escalation is durable: each step's timer is the shared persisted `Deadline`
 * (`Step`, keyed `step-<k>`), stored when the page is created and delivered at
 * `createdAt + afterMinutes`, so a restart before a step still runs it on time
 * and a restart after it runs it at once. Acknowledge, escalate and resolve go
 * through the same actor, so a step and a person's action never interleave.
 */
import { Conflict, NotFound, OncallPage } from "@herald/api"
import { Schema } from "effect"
import { Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"
import { deadlineRpc } from "../cluster/Deadline.ts"

/** Who asked for a change (written to the audit log by the actor). */
export const PageActor = Schema.Struct({
  userId: Schema.NullOr(Schema.String),
  tokenId: Schema.NullOr(Schema.String),
  ip: Schema.NullOr(Schema.String),
  userAgent: Schema.NullOr(Schema.String)
})

/** The key of escalation step `step`'s deadline (one per step: a re-send deduplicates). */
export const stepKey = (step: number) => `step-${step}`

export const Page = Entity.make("Page", [
  /** An escalation step's timer: runs that step (and any earlier one not yet run) while the page is triggered. */
  deadlineRpc("Step"),
  Rpc.make("Acknowledge", { payload: { actor: PageActor }, success: OncallPage, error: Schema.Union([NotFound, Conflict]) }),
  Rpc.make("Escalate", { payload: { actor: PageActor }, success: OncallPage, error: Schema.Union([NotFound, Conflict]) }),
  Rpc.make("Resolve", { payload: { actor: PageActor }, success: OncallPage, error: NotFound })
])
