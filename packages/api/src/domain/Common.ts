/** Small pieces every record shares. */
import { Schema } from "effect"

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/

/** An ISO 8601 date-time string (with a zone), as every timestamp of the spec is on the wire. */
export const Timestamp = Schema.String.check(
  Schema.makeFilter((s: string) => ISO_DATE_TIME.test(s) && Number.isFinite(Date.parse(s)), {
    expected: "an ISO 8601 date-time such as 2026-01-31T12:00:00Z"
  })
).annotate({ identifier: "Timestamp", format: "date-time" })
export type Timestamp = typeof Timestamp.Type

/** `Ok`: `ok` is the constant true. */
export const Ok = Schema.Struct({ ok: Schema.Literal(true) }).annotate({ identifier: "Ok" })
export type Ok = typeof Ok.Type
