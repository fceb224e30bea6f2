/**
 * The message protocol of a watched service's actor (the dead-man's switch):
 * an `effect/cluster` entity keyed by the service id. Callers (the watch
 * settings, the delivery path, the start-up re-arm) import this module only;
 * the behaviour is `WatchBehaviour.ts`, which only the runtime's layer graph
 * imports.
 *
 * Its one message is the shared persisted `Deadline` (`Check`), keyed by its
 * due time (`checkKey`): a re-send for the same due time is a no-op, a later
 * due time is a new timer. A check that finds a later delivery re-arms itself
 * for that delivery + period + grace, so deliveries send no message at all;
 * one that finds the service silent raises the alert with a conditional
 * update. A restart neither loses a stored check nor runs its alert twice.
 */
import { Entity } from "effect/cluster"
import { deadlineRpc } from "../cluster/Deadline.ts"

/** The key of the check due at `dueMillis` (one stored timer per due time). */
export const checkKey = (dueMillis: number) => `check:${dueMillis}`

export const DeliveryWatch = Entity.make("DeliveryWatch", [
  /** Looks at the service's watch: alert, re-arm, or tell that deliveries resumed. */
  deadlineRpc("Check")
])
