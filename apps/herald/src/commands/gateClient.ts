/**
 * The client side of `herald ask` and `herald hook claude-code`: ask the
 * person through a running Herald (the typed client, `HERALD_URL` and
 * `HERALD_TOKEN`) and wait until the prompt is answered, expires or our own
 * timeout passes (then the prompt is canceled so the phone stops showing it).
 * Imported when one of them runs (gate.ts holds what they declare).
 *
 * Client code only: importing the server here would slow every start of these
 * commands and let them reach the workers (a test walks the imports).
 */
import { HeraldClient } from "@herald/client"
import type { Interaction, InteractionKind } from "@herald/api"
import { Clock, Config, Effect, Option, Redacted } from "effect"
import { DEFAULT_URL, GateError, MAX_TIMEOUT, MIN_EXPIRY, PROMPT_MAX, TITLE_MAX, truncate } from "./gate.ts"
import type { Outcome } from "./gate.ts"

/** After the prompt's own deadline the server expires it within a second; wait this much longer before giving up. */
const EXPIRY_GRACE_MS = 5_000
/** The longest single long-poll the API allows. */
const MAX_WAIT = 60

/** The client's options from `HERALD_URL` and `HERALD_TOKEN`; a missing token is a `GateError` that says what to set. */
export const clientOptions = Effect.gen(function*() {
  const baseUrl = yield* Config.String("HERALD_URL").pipe(Config.withDefault(DEFAULT_URL))
  const token = yield* Config.option(Config.Redacted("HERALD_TOKEN"))
  if (Option.isNone(token) || Redacted.value(token.value).trim() === "") {
    return yield* new GateError({
      message: "HERALD_TOKEN is not set: create an API token (hld_…) with the scopes interactions:create and " +
        "interactions:read and export it as HERALD_TOKEN"
    })
  }
  let url: URL
  try {
    url = new URL(baseUrl)
  } catch {
    return yield* new GateError({ message: `HERALD_URL is not a URL: ${baseUrl}` })
  }
  return { baseUrl: url.origin + url.pathname.replace(/\/$/, ""), token: token.value }
}).pipe(
  Effect.catchTag("ConfigError", (e) => Effect.fail(new GateError({ message: `cannot read the environment: ${e.message}` })))
)

/** One line for an error of the client: the API's own message and code, or why Herald could not be reached. */
export const describeError = (error: unknown, baseUrl: string): string => {
  if (typeof error !== "object" || error === null) return String(error)
  const e = error as { _tag?: unknown; error?: unknown; code?: unknown; required?: unknown; message?: unknown }
  if (e._tag === "GateError" && typeof e.message === "string") return e.message
  if (typeof e.error === "string") {
    const code = typeof e.code === "string" ? ` (${e.code})` : ""
    if (e.code === "UNAUTHORIZED") return `Herald refused HERALD_TOKEN: ${e.error}${code}`
    if (e.code === "MISSING_SCOPE" && Array.isArray(e.required)) {
      return `HERALD_TOKEN lacks the scope ${e.required.join(", ")}${code}`
    }
    return `${e.error}${code}`
  }
  if (e._tag === "HttpClientError") return `cannot reach Herald at ${baseUrl}: ${String(e.message)}`
  return typeof e.message === "string" && e.message !== "" ? e.message : String(error)
}

export interface AskRequest {
  readonly kind: InteractionKind
  readonly title: string
  readonly prompt: string
  /** Stop waiting after this many seconds and cancel; none: wait as long as the prompt lives (1 hour by default). */
  readonly timeoutSeconds: Option.Option<number>
  /** The answer the prompt resolves with at its expiry when nobody answered (`--on-timeout`); none: it just expires. */
  readonly defaultOnTimeout?: string | undefined
}

/**
 * Creates the prompt and waits for its end. The prompt lives at least as long
 * as the timeout (the API's minimum is 60 s); at our deadline a still-pending
 * prompt is canceled. Interrupted (Ctrl-C, or the agent killing its hook), it
 * is canceled too.
 */
export const askAndWait = (request: AskRequest): Effect.Effect<Outcome, unknown, HeraldClient> =>
  // The create is not interruptible: a signal while it is in flight waits for the prompt's id, so it can be canceled.
  Effect.uninterruptibleMask((restore) => Effect.gen(function*() {
    const client = yield* HeraldClient
    const started = yield* Clock.currentTimeMillis
    const expiresInSeconds = Option.map(request.timeoutSeconds, (t) => Math.min(MAX_TIMEOUT, Math.max(MIN_EXPIRY, Math.ceil(t))))
    const created = yield* client.interactions.create({
      payload: {
        kind: request.kind,
        title: truncate(request.title, TITLE_MAX),
        prompt: truncate(request.prompt, PROMPT_MAX),
        ...(Option.isSome(expiresInSeconds) ? { expiresInSeconds: expiresInSeconds.value } : {}),
        ...(request.defaultOnTimeout !== undefined ? { defaultOnTimeout: request.defaultOnTimeout } : {})
      }
    })
    const id = created.interaction.id
    const deadline = Option.match(request.timeoutSeconds, {
      onNone: () => Date.parse(created.interaction.expiresAt) + EXPIRY_GRACE_MS,
      onSome: (t) => started + t * 1000
    })

    const settle = (interaction: Interaction): Outcome =>
      interaction.status === "expired" || interaction.status === "canceled"
        ? { _tag: "Unanswered", interaction }
        : { _tag: "Answered", interaction }

    // At our deadline: cancel; a prompt that left `pending` meanwhile (answered at the last moment) keeps its answer.
    const giveUp = client.interactions.cancel({ params: { id } }).pipe(
      Effect.map((interaction): Outcome => ({ _tag: "TimedOut", interaction })),
      Effect.catchTag("InteractionNotPending", () => Effect.map(client.interactions.get({ params: { id } }), settle))
    )

    const poll = (): Effect.Effect<Outcome, unknown> =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const remaining = deadline - now
        if (remaining <= 0) return giveUp
        const timeout = Math.min(MAX_WAIT, Math.max(1, Math.ceil(remaining / 1000)))
        return Effect.flatMap(
          client.interactions.wait({ params: { id }, query: { timeout } }),
          (interaction) => interaction.status === "pending" ? poll() : Effect.succeed(settle(interaction))
        )
      })

    return yield* restore(poll()).pipe(
      Effect.onInterrupt(() => Effect.ignore(client.interactions.cancel({ params: { id } })))
    )
  }))

/** Runs `effect` with the client of the environment; every failure becomes a `GateError` with a clear message. */
export const withClient = <A, E, R>(effect: Effect.Effect<A, E, R | HeraldClient>) =>
  Effect.flatMap(clientOptions, (options) =>
    effect.pipe(
      Effect.provide(HeraldClient.layer({ baseUrl: options.baseUrl, token: options.token, retries: 2 })),
      Effect.mapError((error) => error instanceof GateError ? error : new GateError({ message: describeError(error, options.baseUrl) }))
    ))
