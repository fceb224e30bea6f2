/**
 * A create that names another row (a reply webhook, a device, a service)
 * checks that the row is the caller's first; a delete committed between that
 * check and the insert makes the insert break its foreign key (`23503`). That
 * is the 404 the check would have answered a moment later, not a defect: a
 * repo turns it into `MissingReference`, and the service maps it to its
 * endpoint's 404 at the call site. Every other SQL error stays a defect.
 */
import { Data, Effect } from "effect"
import { SqlError } from "effect/sql"

export class MissingReference extends Data.TaggedError("MissingReference")<{ readonly constraint: string | undefined }> {}

const foreignKeyViolation = (error: unknown): { readonly constraint: string | undefined } | undefined => {
  if (!SqlError.isSqlError(error) || error.reason._tag !== "ConstraintError") return undefined
  const cause = error.reason.cause as { readonly code?: unknown; readonly constraint?: unknown } | undefined
  return cause?.code === "23503" ? { constraint: typeof cause.constraint === "string" ? cause.constraint : undefined } : undefined
}

/** `effect`, with a foreign-key violation as `MissingReference` and any other failure as a defect. */
export const orMissingReference = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, MissingReference, R> =>
  Effect.catch(effect, (error) => {
    const violation = foreignKeyViolation(error)
    return violation === undefined ? Effect.die(error) : Effect.fail(new MissingReference(violation))
  })
