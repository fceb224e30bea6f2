/**
 * The one persisted deadline message of Herald's entities: a prompt's expiry,
 * a live activity's expiry and (next) each escalation step of an on-call page.
 * An entity declares it with `deadlineRpc("Expire")` and schedules it with
 * `client(id).Expire(Deadline.at(expiresAt), { discard: true })`: the cluster
 * stores the message and delivers it at its due time (`DeliverAt`), across
 * restarts. The primary key makes a re-send of the same deadline a no-op
 * (`"expire"`, or the given key, so a page can hold one deadline per step).
 *
 * A stored deadline is delivered at least once: after a restart or a shard
 * move, or when a starting node takes up messages another node may still be
 * processing, it comes again, perhaps while the first delivery still runs.
 * Its handler therefore moves its entity only from the state the deadline is
 * for (a pending prompt, a live activity, the step before this one), with a
 * conditional update, and does nothing when it finds that state gone.
 *
 * Wire form: this is exactly the form of the timers stored by the release
 * before it (`herald/PromptExpireAt` and `herald/ActivityExpireAt`, both
 * `{expiresAtMillis}` on an `Expire` rpc, primary key `"expire"`). A
 * `Schema.Class` encodes to its fields only (its identifier never reaches
 * storage), `key` is an optional key that is absent when not given, and the
 * default primary key is the old one: a timer stored before an upgrade
 * decodes to a `Deadline`, fires at the same time, and a re-send after the
 * upgrade still deduplicates against it. No migration is needed; the field
 * keeps its stored name for that reason.
 */
import { DateTime, PrimaryKey, Schema } from "effect"
import { ClusterSchema, DeliverAt } from "effect/cluster"
import { Rpc } from "effect/rpc"

/** The primary key of a deadline given no key: the one the timers of the previous release were stored under. */
export const DEFAULT_DEADLINE_KEY = "expire"

export class Deadline extends Schema.Class<Deadline>("herald/Deadline")({
  /** When the message is delivered, in epoch milliseconds (the stored name of earlier releases). */
  expiresAtMillis: Schema.Number,
  /** Distinguishes several deadlines of one entity (a page's escalation steps); absent for the single one. */
  key: Schema.optionalKey(Schema.String)
}) {
  /** The deadline at `due` (an ISO timestamp, epoch milliseconds or a `DateTime`), under `key` when an entity has several. */
  static at(due: string | number | DateTime.DateTime, key?: string): Deadline {
    const millis = typeof due === "number" ? due : typeof due === "string" ? Date.parse(due) : DateTime.toEpochMillis(due)
    return new Deadline(key === undefined ? { expiresAtMillis: millis } : { expiresAtMillis: millis, key })
  }

  /** The due time. */
  get dueAt(): DateTime.Utc {
    return DateTime.makeUnsafe(this.expiresAtMillis)
  }

  [PrimaryKey.symbol]() {
    return this.key ?? DEFAULT_DEADLINE_KEY
  }

  [DeliverAt.symbol]() {
    return this.dueAt
  }
}

/**
 * The persisted rpc carrying a `Deadline` (a timer must survive kill -9;
 * volatile messages do not). Its tag is the entity's name for the deadline;
 * `"Expire"` keeps the stored timers of earlier releases routable.
 */
export const deadlineRpc = <const Tag extends string>(tag: Tag) =>
  Rpc.make(tag, { payload: Deadline }).annotate(ClusterSchema.Persisted, true)
