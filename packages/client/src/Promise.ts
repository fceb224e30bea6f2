/**
 * The Promise face, for programs that do not use Effect:
 *
 *   const herald = createClient({ baseUrl, token })              // Agent API (hld_…)
 *   const status = await herald.auth.status()
 *   const me = await createPersonClient({ baseUrl, token: session }).me.get()   // Person API (hls_…)
 *
 * Every method resolves with the decoded record or rejects with a
 * `HeraldError`. Its `code` is one of the operation's declared error codes
 * (`isHeraldError(error, herald.interactions.cancel)` narrows it to them), or
 * `INVALID_REQUEST` (the request failed its schema here; nothing was sent),
 * `INVALID_RESPONSE` (an answer this client cannot read) or `TRANSPORT`.
 */
import type { AgentApi, AppApi } from "@herald/api"
import { Cause, Context, Effect, Exit, Layer, ManagedRuntime } from "effect"
import { FetchHttpClient, HttpClient } from "effect/http"
import { HeraldClient, HeraldPersonClient } from "./HeraldClient.ts"
import type { ClientOptions } from "./HeraldClient.ts"
import type { Decoded, ForApi } from "./Requests.ts"

/** Codes this client gives failures that are not an API error body. */
export type LocalCode = "INVALID_REQUEST" | "INVALID_RESPONSE" | "TRANSPORT"

/**
 * Where a failure arose: `api` (the server answered an error body), `local` (the request failed its
 * schema before anything was sent) or `transport` (no answer, or one this client cannot read).
 */
export type ErrorKind = "api" | "local" | "transport"

/** A failed call. `Code` is the union of the operation's declared codes (`string` when unknown). */
export class HeraldError<Code extends string = string> extends Error {
  readonly status: number | undefined
  readonly code: Code | LocalCode
  readonly kind: ErrorKind
  readonly body: unknown
  constructor(options: {
    message: string
    status: number | undefined
    code: Code | LocalCode
    kind: ErrorKind
    body: unknown
    cause?: unknown
  }) {
    super(options.message, { cause: options.cause })
    this.name = "HeraldError"
    this.status = options.status
    this.code = options.code
    this.kind = options.kind
    this.body = options.body
  }
}

/** The literal `code`s of an operation's declared errors. */
type CodesOf<E> = E extends { readonly code: infer C extends string } ? C : never

/** One operation: the loose request in, the decoded record out; `~codes` carries its error codes for `isHeraldError`. */
export type Operation<Req, A, Code extends string> =
  & ({} extends Req ? (request?: Req) => Promise<A> : (request: Req) => Promise<A>)
  & { readonly "~codes"?: Code }

/**
 * The operation a method of the Effect client becomes. Inferring from the loosened method reads its last
 * signature: the one without the optional parts (./Requests.ts), or the original where there are none.
 */
type ToOperation<F> = F extends (request: infer Req) => Effect.Effect<infer A, infer E, any>
  ? Operation<Omit<Exclude<Req, void>, "responseMode" | "sseOptions">, Decoded<A>, CodesOf<E>>
  : never

/** Each group's methods as Promise operations, derived from the Effect client `C`. */
export type PromiseFace<C> =
  & { readonly [G in keyof C]: C[G] extends (...args: ReadonlyArray<any>) => any ? ToOperation<C[G]> : { readonly [M in keyof C[G]]: ToOperation<C[G][M]> } }
  & {
    /** Releases the client's resources (keep-alive connections). */
    readonly close: () => Promise<void>
  }

/** The Agent API (`hld_…` token). */
export type PromiseClient = PromiseFace<ForApi<typeof AgentApi>>
/** The Person API (`hls_…` session token). */
export type PromisePersonClient = PromiseFace<ForApi<typeof AppApi>>

/** The `HeraldError` of an operation, e.g. `HeraldErrorOf<typeof herald.interactions.cancel>`. */
export type HeraldErrorOf<Op> = Op extends { readonly "~codes"?: infer Code extends string } ? HeraldError<Code> : HeraldError

/** Narrows a caught value to the `HeraldError` of `operation` (its `code` to the operation's declared codes). */
export const isHeraldError = <Code extends string = string>(
  error: unknown,
  _operation?: { readonly "~codes"?: Code }
): error is HeraldError<Code> => error instanceof HeraldError

/**
 * The status the contract annotates on the error's class (`httpApiStatus`):
 * read from the schema, so every code of the contract has its status, not
 * only those a hand-kept table remembered.
 */
const statusOf = (error: object): number | undefined => {
  const status = (error.constructor as { readonly ast?: { readonly annotations?: { readonly httpApiStatus?: unknown } } }).ast
    ?.annotations?.httpApiStatus
  return typeof status === "number" ? status : undefined
}

/** Set once the call's request leaves for the server: a schema failure before that is the caller's request. */
const Sent = Context.Reference<{ sent: boolean } | undefined>("herald/client/Sent", { defaultValue: () => undefined })

const markSent = Layer.effect(
  HttpClient.HttpClient,
  Effect.map(
    Effect.service(HttpClient.HttpClient),
    HttpClient.tapRequest(() =>
      Effect.map(Effect.service(Sent), (marker) => {
        if (marker !== undefined) marker.sent = true
      })
    )
  )
).pipe(Layer.provide(FetchHttpClient.layer))

const toHeraldError = (error: unknown, sent: boolean): HeraldError => {
  if (typeof error === "object" && error !== null && "code" in error && "error" in error) {
    const { _tag, ...body } = error as Record<string, unknown>
    return new HeraldError({ message: String(body.error), status: statusOf(error), code: String(body.code), kind: "api", body, cause: error })
  }
  const message = error instanceof Error ? error.message : String(error)
  const schema = typeof error === "object" && error !== null && (error as { readonly _tag?: unknown })._tag === "SchemaError"
  if (schema && !sent) {
    return new HeraldError({ message: `invalid request: ${message}`, status: undefined, code: "INVALID_REQUEST", kind: "local", body: undefined, cause: error })
  }
  const code = schema ? "INVALID_RESPONSE" : "TRANSPORT"
  return new HeraldError({ message, status: undefined, code, kind: "transport", body: undefined, cause: error })
}

type Methods = Record<string, ((request: unknown) => Effect.Effect<unknown, unknown>) | Record<string, (request: unknown) => Effect.Effect<unknown, unknown>>>

const promiseFace = <Face>(runtime: ManagedRuntime.ManagedRuntime<any, never>, client: Effect.Effect<Methods, never, any>): Face => {
  const call = (path: ReadonlyArray<string>, request: unknown) => {
    const marker = { sent: false }
    return runtime.runPromiseExit(Effect.flatMap(client, (methods) => {
      const group = methods[path[0]!]
      const fn = path.length === 1 ? group : typeof group === "object" ? group[path[1]!] : undefined
      return typeof fn !== "function"
        ? Effect.die(new TypeError(`herald.${path.join(".")} is not an operation`))
        : Effect.provideService(fn(request), Sent, marker)
    })).then((exit) => {
      if (Exit.isSuccess(exit)) return exit.value
      const failure = Cause.findErrorOption(exit.cause)
      throw toHeraldError(failure._tag === "Some" ? failure.value : Cause.squash(exit.cause), marker.sent)
    })
  }
  // Groups and methods resolve lazily, so the face mirrors the contract without listing it.
  const method = (path: ReadonlyArray<string>) => (request?: unknown) => call(path, request)
  return new Proxy({} as Record<string, unknown>, {
    get: (_, key) =>
      key === "close"
        ? () => runtime.dispose()
        : typeof key === "string" && key !== "then"
        ? new Proxy(method([key]), { get: (_, name) => typeof name === "string" ? method([key, name]) : undefined })
        : undefined
  }) as Face
}

/** The Agent API as Promises. */
export const createClient = (options: ClientOptions): PromiseClient => {
  const runtime = ManagedRuntime.make(HeraldClient.layerNoDeps(options).pipe(Layer.provide(markSent)))
  return promiseFace<PromiseClient>(runtime, Effect.service(HeraldClient) as unknown as Effect.Effect<Methods, never, HeraldClient>)
}

/** The Person API as Promises (a session token, `hls_…`). */
export const createPersonClient = (options: ClientOptions): PromisePersonClient => {
  const runtime = ManagedRuntime.make(HeraldPersonClient.layerNoDeps(options).pipe(Layer.provide(markSent)))
  return promiseFace<PromisePersonClient>(
    runtime,
    Effect.service(HeraldPersonClient) as unknown as Effect.Effect<Methods, never, HeraldPersonClient>
  )
}
