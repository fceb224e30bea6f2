/**
 * Per-address limits (docs/limits.md, "Per-address limits"): each class is a
 * GCRA budget a minute per client address (ClientAddress.ts), in memory (the
 * arithmetic of billing/Gcra.ts), swept by a worker.
 *
 * - `register`: `POST /oauth/register`.
 * - `oauth`: `/oauth/authorize` (GET, POST), `/oauth/token`, `/oauth/revoke`,
 *   `/oauth/sign-in`, together.
 * - `personApi`: every Person API route.
 * - `codes`: routes that take a guessable code or link (invite acceptance,
 *   sign-in links): every attempt counts, failed ones included, before the
 *   code is looked up, so guessing is slow whatever the answer.
 * - `signIn`: the sign-in routes that take no session (an e-mailed link's
 *   request, the passkey ceremony), which mail or store on anyone's behalf.
 * - `authFailures`: answers `401` on the Agent API (MCP included) and the
 *   Person API. Counted after the answer, refused before authentication once
 *   spent; a request that authenticates costs one map lookup, and none while
 *   no address has failed in the last minute.
 *
 * A request of several classes is taken from all or refused whole. The check
 * is a global router middleware registered outside the edge (runtime/
 * Server.ts), so it runs before the edge reads an unauthenticated body, before
 * authentication and before any database work; its own 429 carries what the
 * edge would have added (a request id, `nosniff`). The route is read from the
 * route table (Routes.ts), as the router will match it, never from a prefix.
 *
 * Several nodes: each node counts what it serves, unlike the per-token limits
 * (billing/RateLimiter.ts, shared in the database): these guards refuse before
 * any database work, so behind N nodes an address gets up to N times each
 * budget (docs/operations.md, "What each node keeps to itself").
 */
import { Clock, Context, Duration, Effect, Layer, Metric, Option } from "effect"
import { HttpEffect, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Gcra } from "../billing/Gcra.ts"
import type { Decision } from "../billing/Gcra.ts"
import { appendRateLimitHeadersUnsafe, seconds } from "../billing/RateLimitHeaders.ts"
import { ThrottleConfig } from "../config/ThrottleConfig.ts"
import type { ThrottleConfigShape } from "../config/ThrottleConfig.ts"
import { errorPage } from "../oauth/ConsentPage.ts"
import { clientKey } from "./ClientAddress.ts"
import { requestIdOf } from "./Edge.ts"
import { routes } from "./Routes.ts"
import type { Route } from "./Routes.ts"

export type ThrottleClass = "register" | "oauth" | "personApi" | "codes" | "signIn"

/** How a refusal is answered: the OAuth error body, an HTML page (browser routes), or Herald's `{error, code}`. */
export type Answer = "oauth" | "page" | "herald"

export interface Policy {
  readonly classes: ReadonlyArray<ThrottleClass>
  readonly answer: Answer
}

const byRoute: ReadonlyMap<string, Policy> = new Map([
  ["POST /oauth/register", { classes: ["register"], answer: "oauth" }],
  ["GET /oauth/authorize", { classes: ["oauth"], answer: "page" }],
  ["POST /oauth/authorize", { classes: ["oauth"], answer: "page" }],
  ["POST /oauth/token", { classes: ["oauth"], answer: "oauth" }],
  ["POST /oauth/revoke", { classes: ["oauth"], answer: "oauth" }],
  ["GET /oauth/sign-in", { classes: ["oauth", "codes"], answer: "page" }],
  ["POST /api/app/invites/accept", { classes: ["personApi", "codes"], answer: "herald" }],
  ["POST /api/app/auth/email-link", { classes: ["personApi", "signIn"], answer: "herald" }],
  ["GET /api/app/auth/link", { classes: ["personApi", "codes"], answer: "page" }],
  ["POST /api/app/auth/passkey/options", { classes: ["personApi", "signIn"], answer: "herald" }],
  ["POST /api/app/auth/passkey", { classes: ["personApi", "signIn"], answer: "herald" }]
])

const personApi: Policy = { classes: ["personApi"], answer: "herald" }

/** The policy of a matched route, if it has one. */
export const policyOf = (route: Route): Policy | undefined =>
  byRoute.get(`${route.method} ${route.path}`) ??
    (route.secured && route.path.startsWith("/api/app/") ? personApi : undefined)

export interface Outcome {
  readonly allowed: boolean
  /** The decision the answer reports: the refusing class's, else the tightest; undefined when every class is off. */
  readonly reported: Decision | undefined
  /** The class that refused. */
  readonly refusedBy?: ThrottleClass | undefined
}

/** The limiter itself, clock passed in (unit tests drive it directly). */
export const makeAddressThrottle = (config: ThrottleConfigShape) => {
  const gcra = (limit: number) => limit > 0 ? new Gcra(limit) : undefined
  const classes: Record<ThrottleClass, Gcra | undefined> = {
    register: gcra(config.registerPerMinute),
    oauth: gcra(config.oauthPerMinute),
    personApi: gcra(config.personApiPerMinute),
    codes: gcra(config.codesPerMinute),
    signIn: gcra(config.signInPerMinute)
  }
  const failures = gcra(config.authFailuresPerMinute)

  /** Takes one request of `policy` from `key`'s budgets at `now`, or refuses it whole. */
  const take = (policy: Policy, key: string, now: number): Outcome => {
    const checked: Array<readonly [Gcra, Decision & { readonly next: number }]> = []
    let reported: Decision | undefined
    for (const name of policy.classes) {
      const limiter = classes[name]
      if (limiter === undefined) continue
      const decision = limiter.check(key, now)
      if (!decision.allowed) return { allowed: false, reported: decision, refusedBy: name }
      checked.push([limiter, decision])
      if (reported === undefined || decision.remaining < reported.remaining) reported = decision
    }
    for (const [limiter, decision] of checked) limiter.commit(key, decision.next)
    return { allowed: true, reported }
  }

  /** The refusal when `key` has no failed authentication left at `now`; undefined otherwise (nothing is taken). */
  const failuresSpent = (key: string, now: number): Decision | undefined => {
    if (failures === undefined) return undefined
    const decision = failures.check(key, now)
    return decision.allowed ? undefined : decision
  }

  /** Whether any address failed authentication in the last minute (the sweep empties the map): else nothing to look up. */
  const anyFailures = () => failures !== undefined && failures.size > 0

  /** Counts one failed authentication of `key`. */
  const failed = (key: string, now: number): void => {
    const decision = failures?.check(key, now)
    if (decision?.allowed === true) failures!.commit(key, decision.next)
  }

  const sweep = (now: number) => {
    for (const limiter of Object.values(classes)) limiter?.sweep(now)
    failures?.sweep(now)
  }

  const size = () => Object.values(classes).reduce((n, limiter) => n + (limiter?.size ?? 0), 0) + (failures?.size ?? 0)

  return { take, failuresSpent, anyFailures, failed, countsFailures: failures !== undefined, sweep, size, trusted: config.trustedProxies }
}

export type AddressThrottleShape = ReturnType<typeof makeAddressThrottle> & {
  /** Forgets keys whose budget is whole again; a worker runs it every `sweepEvery` (runtime/Workers.ts). */
  readonly sweepNow: Effect.Effect<void>
  readonly sweepEvery: Duration.Duration
}

export class AddressThrottle extends Context.Service<AddressThrottle, AddressThrottleShape>()("herald/AddressThrottle") {
  static readonly layerNoDeps = Layer.effect(AddressThrottle, Effect.map(ThrottleConfig, (config) => {
    const throttle = makeAddressThrottle(config)
    return AddressThrottle.of({
      ...throttle,
      sweepNow: Effect.map(Clock.currentTimeMillis, throttle.sweep),
      sweepEvery: Duration.minutes(1)
    })
  }))

  static readonly layer = AddressThrottle.layerNoDeps.pipe(Layer.provide(ThrottleConfig.layer))
}

// ── answers ─────────────────────────────────────────────────────────────────

const messages: Record<ThrottleClass | "authFailures", string> = {
  register: "Too many client registrations from this address",
  oauth: "Too many authorization requests from this address",
  personApi: "Too many requests from this address",
  codes: "Too many attempts at a code or link from this address",
  signIn: "Too many sign-in requests from this address",
  authFailures: "Too many failed authentications from this address"
}

/** The 429 of a refused request, with the headers the edge and the limit headers would have added. */
const refusal = (request: HttpServerRequest.HttpServerRequest, answer: Answer, refusedBy: ThrottleClass | "authFailures", decision: Decision) => {
  const text = `${messages[refusedBy]} (${decision.limit} a minute). Retry after ${seconds(decision.retryAfterMs)} s.`
  const body = answer === "page"
    ? errorPage(429, "Too many requests", text)
    : HttpServerResponse.jsonUnsafe(
      answer === "oauth" ? { error: "temporarily_unavailable", error_description: text } : { error: text, code: "RATE_LIMITED" },
      { status: 429 }
    )
  return HttpServerResponse.setHeaders(body, {
    "ratelimit-limit": String(decision.limit),
    "ratelimit-remaining": "0",
    "ratelimit-reset": seconds(decision.resetMs),
    "retry-after": seconds(decision.retryAfterMs),
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "x-request-id": requestIdOf(request.headers["x-request-id"])
  })
}

// One series per class, built once (Edge.ts explains why).
const refusedSeries = new Map<string, Metric.Metric<number, unknown>>()
const refusedCounter = (name: string) => {
  let counter = refusedSeries.get(name)
  if (counter === undefined) {
    counter = Metric.counter("herald_http_throttled_total", {
      description: "Requests refused by a per-address limit (429), by class.",
      attributes: { class: name }
    })
    refusedSeries.set(name, counter)
  }
  return counter
}

// ── the middleware ──────────────────────────────────────────────────────────

const keyOf = (request: HttpServerRequest.HttpServerRequest, trusted: AddressThrottleShape["trusted"]) => {
  const forwarded = request.headers["x-forwarded-for"]
  return clientKey(Option.getOrUndefined(request.peerAddress), forwarded, trusted)
}

/**
 * The global middleware. Registered before the edge (runtime/Server.ts), so
 * it wraps it: what it refuses never reaches the edge, the router or a body.
 */
export const AddressThrottleMiddleware = HttpRouter.middleware(Effect.map(AddressThrottle, (throttle) => {
  // After the answer: a 401 of a bearer API counts against its address. One
  // function for every request (it reads the request again), not one each.
  const countFailure = (request: HttpServerRequest.HttpServerRequest, response: HttpServerResponse.HttpServerResponse) =>
    Effect.withFiber((fiber) => {
      if (response.status === 401) throttle.failed(keyOf(request, throttle.trusted), fiber.getRef(Clock.Clock).currentTimeMillisUnsafe())
      return Effect.succeed(response)
    })

  return (httpEffect) =>
    Effect.withFiber((fiber) => {
      const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
      const url = request.url
      const app = url.startsWith("/api/app/")
      // The Agent API has only the failure budget: no route lookup on its hot path.
      const bearer = throttle.countsFailures && (app || url.startsWith("/api/agent/"))
      const matched = app || url.startsWith("/oauth/") ? routes.find(request.method, url) : undefined
      const policy = matched === undefined ? undefined : policyOf(matched.route)
      if (policy === undefined && !bearer) return httpEffect
      const now = fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()
      // The address is worked out only when a budget is looked up: an Agent API request pays for it only
      // while some address has failed authentication in the last minute.
      let key: string | undefined
      if (bearer) {
        const spent = throttle.anyFailures() ? throttle.failuresSpent(key = keyOf(request, throttle.trusted), now) : undefined
        if (spent !== undefined) {
          refusedCounter("authFailures").updateUnsafe(1, fiber.context)
          return Effect.succeed(refusal(request, "herald", "authFailures", spent))
        }
        HttpEffect.appendPreResponseHandlerUnsafe(fiber.context, countFailure)
      }
      if (policy === undefined) return httpEffect
      const outcome = throttle.take(policy, key ?? keyOf(request, throttle.trusted), now)
      if (!outcome.allowed) {
        refusedCounter(outcome.refusedBy!).updateUnsafe(1, fiber.context)
        return Effect.succeed(refusal(request, policy.answer, outcome.refusedBy!, outcome.reported!))
      }
      if (outcome.reported !== undefined) appendRateLimitHeadersUnsafe(fiber.context, outcome.reported)
      return httpEffect
    })
}), { global: true })
