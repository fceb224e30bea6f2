/**
 * The Promise face, for programs that do not use Effect:
 *
 *   const herald = createClient({ baseUrl, token })
 *   const status = await herald.auth.status()
 *
 * Every method resolves with the decoded record or rejects with a
 * `HeraldError` carrying the spec's `status`, `code` and body.
 */
import type { AgentApi } from "@herald/api"
import { Cause, Effect, Exit, ManagedRuntime } from "effect"
import type { HttpClientResponse } from "effect/http"
import type { HttpApiClient } from "effect/http-api"
import { HeraldClient } from "./HeraldClient.ts"
import type { ClientOptions } from "./HeraldClient.ts"

/** A failed call: an API error (`code` from the spec's error body) or a transport failure (`code: "TRANSPORT"`). */
export class HeraldError extends Error {
  readonly status: number | undefined
  readonly code: string
  readonly body: unknown
  constructor(options: { message: string; status: number | undefined; code: string; body: unknown; cause?: unknown }) {
    super(options.message, { cause: options.cause })
    this.name = "HeraldError"
    this.status = options.status
    this.code = options.code
    this.body = options.body
  }
}

type AgentClient = HttpApiClient.ForApi<typeof AgentApi>

/** The decoded record (the client's other response modes are not offered here). */
type Decoded<A> = Exclude<A, HttpClientResponse.HttpClientResponse | readonly [unknown, HttpClientResponse.HttpClientResponse]>

/** Each group's methods, taking the same request object and returning a Promise. */
export type PromiseClient = {
  readonly [G in keyof AgentClient]: {
    readonly [M in keyof AgentClient[G]]: AgentClient[G][M] extends (request: infer Req) => Effect.Effect<infer A, any, any>
      ? {} extends Req ? (request?: Req) => Promise<Decoded<A>> : (request: Req) => Promise<Decoded<A>>
      : never
  }
} & {
  /** Releases the client's resources (keep-alive connections). */
  readonly close: () => Promise<void>
}

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

const toHeraldError = (error: unknown): HeraldError => {
  if (typeof error === "object" && error !== null && "code" in error && "error" in error) {
    const { _tag, ...body } = error as Record<string, unknown>
    const code = String(body.code)
    return new HeraldError({ message: String(body.error), status: statusOf(error), code, body, cause: error })
  }
  const message = error instanceof Error ? error.message : String(error)
  return new HeraldError({ message, status: undefined, code: "TRANSPORT", body: undefined, cause: error })
}

export const createClient = (options: ClientOptions): PromiseClient => {
  const runtime = ManagedRuntime.make(HeraldClient.layer(options))
  const call = (group: string, method: string, request: unknown) =>
    runtime.runPromiseExit(Effect.flatMap(Effect.service(HeraldClient), (client) => {
      const fn = (client as unknown as Record<string, Record<string, (req: unknown) => Effect.Effect<unknown, unknown>>>)[group]?.[method]
      return fn === undefined ? Effect.die(new TypeError(`herald.${group}.${method} is not an operation`)) : fn(request ?? {})
    })).then((exit) => {
      if (Exit.isSuccess(exit)) return exit.value
      const failure = Cause.findErrorOption(exit.cause)
      throw toHeraldError(failure._tag === "Some" ? failure.value : Cause.squash(exit.cause))
    })
  // Groups and methods resolve lazily, so the facade mirrors the contract without listing it.
  return new Proxy({} as PromiseClient, {
    get: (_, group) =>
      group === "close"
        ? () => runtime.dispose()
        : typeof group === "string"
        ? new Proxy({}, { get: (_, method) => (request?: unknown) => call(group, String(method), request) })
        : undefined
  })
}
