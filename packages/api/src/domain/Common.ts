/** Small pieces every record shares: timestamps, URIs, `Ok`, and open/closed objects. */
import { Schema } from "effect"

// RFC 3339 `date-time` (the profile of ISO 8601 that JSON Schema's `format: "date-time"` names):
// seconds required, optional fraction, a zone always (`Z` or `±HH:MM`).
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:Z|[+-](\d{2}):(\d{2}))$/

const daysInMonth = (year: number, month: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate()

// The instants every store and client can hold: years 0001–9999 in UTC (an offset can push a
// written 9999 or 0001 past them, and PostgreSQL then refuses the value).
const EARLIEST = Date.parse("0001-01-01T00:00:00Z")
const LATEST = Date.parse("9999-12-31T23:59:59.999Z")

/**
 * Whether `s` is an RFC 3339 date-time that names a real instant in years 0001–9999 (UTC).
 * The calendar is checked by hand because `Date.parse` rolls `2026-02-30` over to March
 * instead of refusing it.
 */
export const isDateTimeString = (s: string): boolean => {
  const m = DATE_TIME.exec(s)
  if (m === null) return false
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number]
  const offsetHour = m[7] === undefined ? 0 : Number(m[7])
  const offsetMinute = m[8] === undefined ? 0 : Number(m[8])
  if (!(month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month) &&
    hour <= 23 && minute <= 59 && second <= 59 && offsetHour <= 23 && offsetMinute <= 59)) return false
  const instant = Date.parse(s)
  return instant >= EARLIEST && instant <= LATEST
}

/**
 * A timestamp: "timestamps are ISO 8601 date-time strings". It stays a string in the type (no
 * `Date` conversion) so records round-trip byte for byte; the filter's `toJsonSchema` hook puts
 * `format: "date-time"` into JSON Schema and OpenAPI.
 */
export const Timestamp = Schema.String.check(
  Schema.makeFilter(isDateTimeString, {
    expected: "an ISO 8601 date-time with a zone, such as 2026-01-31T12:00:00Z",
    toJsonSchema: () => ({ format: "date-time" })
  })
).annotate({ identifier: "Timestamp", description: "An ISO 8601 (RFC 3339) date-time string." })
export type Timestamp = typeof Timestamp.Type

/** An absolute URI string (`format: "uri"` in JSON Schema), as the spec's "string (URI)". */
export const Uri = Schema.String.check(
  Schema.makeFilter((s: string) => URL.canParse(s), {
    expected: "an absolute URI",
    toJsonSchema: () => ({ format: "uri" })
  })
)
export type Uri = typeof Uri.Type

const schemeOf = (s: string) => URL.canParse(s) ? new URL(s).protocol.slice(0, -1) : ""

// Schemes that run or read something on the phone itself rather than open a page or an app.
const refusedTapSchemes = new Set(["javascript", "vbscript", "data", "file", "blob", "about"])

/** A link a person taps (`url`): any absolute URI — web pages, app links, `mailto:`, `tel:` — at most 2,048 characters. */
export const TapUrl = Uri.check(
  Schema.isMaxLength(2048),
  Schema.makeFilter((s: string) => !refusedTapSchemes.has(schemeOf(s)), {
    expected: "a link whose scheme is not javascript, vbscript, data, file, blob or about"
  })
)

/** An image the phone fetches (`imageUrl`): an http(s) URL of at most 2,048 characters. */
export const ImageUrl = Uri.check(
  Schema.isMaxLength(2048),
  Schema.makeFilter((s: string) => schemeOf(s) === "https" || schemeOf(s) === "http", { expected: "an http(s) URL" })
)

/** `Ok`: `ok` is the constant true. A plain struct (not a class) so handlers may answer `{ ok: true }`. */
export const Ok = Schema.Struct({ ok: Schema.Literal(true) }).annotate({ identifier: "Ok" })
export type Ok = typeof Ok.Type
/** The `Ok` answer. */
export const ok: Ok = { ok: true }

/** `bodyFormat` of notifications and inbox items: `text` or `markdown`. */
export const BodyFormat = Schema.Literals(["text", "markdown"])
export type BodyFormat = typeof BodyFormat.Type

/** A free-form JSON object (the spec's "object"), e.g. audit `metadata` or a push payload. */
export const FreeObject = Schema.Record(Schema.String, Schema.Unknown)
export type FreeObject = typeof FreeObject.Type

/**
 * A struct that rejects every key it does not declare, whatever the caller's parse options (the
 * default strips unknown keys silently). It is still typed as a `Struct`, so `Schema.Class` takes
 * it; underneath it carries an index signature whose keys are the undeclared names and whose
 * value is `Never`. JSON Schema (OpenAPI) shows it with `additionalProperties: false`.
 */
export const closedStruct = <const Fields extends Schema.Struct.Fields>(fields: Fields): Schema.Struct<Fields> => {
  const declared: ReadonlyArray<string> = Object.keys(fields)
  const undeclaredKey = Schema.String.check(
    Schema.makeFilter((key: string) => !declared.includes(key), {
      expected: "an undeclared field",
      toJsonSchema: () => ({ not: { enum: [...declared] } })
    })
  )
  const noValue = Schema.Never.annotate({ message: "Unexpected field: extra fields are not allowed here" })
  const base = Schema.Struct(fields)
  return base.rebuild(Schema.StructWithRest(base, [Schema.Record(undeclaredKey, noValue)]).ast)
}

/**
 * A struct that keeps keys it does not declare (decoded as unknown JSON values) instead of
 * stripping them, for objects the spec leaves open ("and further fields"). Typed as a `Struct`;
 * a class built on it may add `readonly [key: string]: unknown` to expose the extra keys.
 */
export const openStruct = <const Fields extends Schema.Struct.Fields>(fields: Fields): Schema.Struct<Fields> => {
  const base = Schema.Struct(fields)
  return base.rebuild(Schema.StructWithRest(base, [Schema.Record(Schema.String, Schema.Unknown)]).ast)
}

/**
 * How much an alert may interrupt its person. `critical` (and a page, and a prompt marked `urgent`) breaks
 * through quiet hours; the others follow the person's quiet-hours choice (delivered silently, or held and
 * summarised when the quiet ends). Inbound senders map their severities onto it (docs/inbound-webhooks.md).
 */
export const AlertPriority = Schema.Literals(["low", "normal", "high", "critical"])
export type AlertPriority = typeof AlertPriority.Type
