/**
 * Every MCP message metered, at two points that cannot disagree:
 *
 * - The HTTP gate (McpAuth.ts) counts a request body's units before the MCP
 *   runtime sees it — one request per JSON-RPC message, one send per call of
 *   a sending tool (ToolRoutes.ts `bodyUnits`) — and takes them all or none:
 *   a batch that does not fit is answered 429 and none of it runs. A batch
 *   longer than `MAX_BATCH_MESSAGES` is refused whole (400, JSON-RPC
 *   `-32600`) before anything runs. What it took is handed to the request's
 *   tool calls as `McpPrepaid`.
 * - Where a tool runs (`ToolMeter`, global MCP middleware: every tool, present
 *   or future, on any transport): a `tools/call` owes one request, and one
 *   send when its mirrored endpoint is a `SendingOperation`. It pays from the
 *   request's prepaid units first and takes the rest from the limiter itself,
 *   so a call the gate did not count (another transport, a miscount) is still
 *   metered, and a counted one is never charged twice. Over a limit the call
 *   fails with the JSON-RPC error `-32004` whose `data` is the HTTP 429 body
 *   (`{code: "RATE_LIMITED", error, retryAfterSeconds}`): a protocol error
 *   like a missing scope, not a tool result the model would try to correct.
 */
import { CurrentAgent } from "@herald/api"
import { Clock, Context, Effect, Schema } from "effect"
import { McpSchema, McpServer } from "effect/ai"
import { RateLimiter } from "../billing/RateLimiter.ts"
import type { RateLimitOutcome, Units } from "../billing/RateLimiter.ts"
import { seconds } from "../billing/RateLimitHeaders.ts"
import { callSends, missingScopes } from "./ToolRoutes.ts"

/**
 * The most JSON-RPC messages one request may carry (batches exist only in
 * protocol 2025-03-26): bounds what one POST can make the server do at once.
 */
export const MAX_BATCH_MESSAGES = 20

/** The JSON-RPC code of a batch refused whole, `Invalid Request`. */
export const INVALID_REQUEST_CODE = -32600

/** The JSON-RPC code of a tool call over the token's rate limits (implementation-defined server error range). */
export const RATE_LIMITED_CODE = -32004

/** The 400 answer to a batch longer than `MAX_BATCH_MESSAGES`, as the MCP runtime answers a malformed request. */
export const batchTooLong = (messages: number) => {
  const error = `A JSON-RPC batch may hold at most ${MAX_BATCH_MESSAGES} messages; this one holds ${messages}. ` +
    "Nothing in it was run: send it in smaller batches."
  return {
    jsonrpc: "2.0" as const,
    id: null,
    error: { code: INVALID_REQUEST_CODE, message: error, data: { code: "BATCH_TOO_LARGE", error, limit: MAX_BATCH_MESSAGES } }
  }
}

/** The `error` text of a refusal of `units` (outcome not allowed, with the budget that refused). */
export const rateLimitedMessage = (outcome: RateLimitOutcome, units: Units): string => {
  const decision = outcome.reported!
  const what = outcome.refused === "sends" ? "sends" : "requests"
  const asked = outcome.refused === "sends" ? units.sends : units.requests
  if (asked > decision.limit) {
    return `Rate limit exceeded: this request takes ${asked} ${what} at once, more than the ${decision.limit} ${what} ` +
      "a minute this token may make: send fewer messages per batch."
  }
  return `Rate limit exceeded: ${decision.limit} ${what} a minute for this token. ` +
    `Retry after ${seconds(decision.retryAfterMs)} s.`
}

/**
 * Units the HTTP gate already took for the request's messages, consumed by
 * its tool calls (mutable: a batch's calls share it). Absent (undefined)
 * outside the gate: every unit is then taken at the tool.
 */
export interface Prepaid {
  requests: number
  sends: number
}

export const McpPrepaid = Context.Reference<Prepaid | undefined>("herald/McpPrepaid", { defaultValue: () => undefined })

/** A tool call over the token's rate limits: JSON-RPC error `-32004`, the HTTP 429 body as `data`. */
export class McpRateLimited extends Schema.Error<McpRateLimited>("McpRateLimited")({
  ...McpSchema.McpErrorBase.fields,
  _tag: Schema.tag("McpRateLimited"),
  code: Schema.tag(RATE_LIMITED_CODE)
}) {}

/** What a call owes after its prepaid units: `need` minus what `prepaid` still holds (which it consumes). */
const payFrom = (prepaid: Prepaid | undefined, need: Units): Units => {
  if (prepaid === undefined) return need
  const requests = Math.min(prepaid.requests, need.requests)
  const sends = Math.min(prepaid.sends, need.sends)
  prepaid.requests -= requests
  prepaid.sends -= sends
  return { requests: need.requests - requests, sends: need.sends - sends }
}

const argumentsOf = (payload: unknown): unknown =>
  typeof payload === "object" && payload !== null ? (payload as { arguments?: unknown }).arguments : undefined

/**
 * Meters every `tools/call` on the server where the tool runs (global
 * middleware, so no registration can leave it out). A call the token's scopes
 * refuse owes nothing (`ScopeGate` answers it, as a 403 is not counted on the
 * Agent API).
 */
export const ToolMeter = McpServer.middleware(
  Effect.map(RateLimiter, (limiter) => (effect, { method, payload, target }) => {
    if (method !== "tools/call") return effect
    return Effect.flatMap(CurrentAgent, (agent) =>
      Effect.withFiber((fiber) => {
        if (missingScopes(target, agent.scopes).length > 0) return effect
        const need = { requests: 1, sends: callSends(target, argumentsOf(payload)) ? 1 : 0 }
        const owed = payFrom(fiber.getRef(McpPrepaid), need)
        if (owed.requests === 0 && owed.sends === 0) return effect
        return Effect.flatMap(limiter.takeUnits(agent.tokenId, owed, fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()), (outcome) => {
          if (outcome.allowed) return effect
          const error = rateLimitedMessage(outcome, owed)
          return Effect.fail(
            new McpRateLimited({
              message: error,
              data: { code: "RATE_LIMITED", error, retryAfterSeconds: Number(seconds(outcome.reported!.retryAfterMs)) }
            })
          )
        })
      }))
  }),
  { global: true }
)
