/**
 * Optional request parts made optional. `HttpApiClient` asks for `headers`
 * and `query` whenever an endpoint declares them, even when every field in
 * them is optional (`headers: {}` on every `notifications.create`). `Client`
 * maps the derived client: each such method gains a signature where those
 * parts may be left out, and `loosen` fills them with `{}` at run time.
 */
import type { Effect } from "effect"
import type { HttpClientResponse } from "effect/http"
import type { HttpApi, HttpApiClient } from "effect/http-api"

/** The request parts that may be omitted when all their fields are optional. */
type Omissible = "headers" | "query"

/** The omissible parts of `Req` that `{}` satisfies. */
type OptionalParts<Req> = { [K in keyof Req & Omissible]-?: {} extends Req[K] ? K : never }[keyof Req & Omissible]

type Simplify<A> = { [K in keyof A]: A[K] } & {}

/** The request without its optional parts as required keys, and without `responseMode` (this form always decodes). */
export type LooseRequest<Req> = Simplify<Omit<Req, OptionalParts<Req> | "responseMode"> & Partial<Pick<Req, OptionalParts<Req>>>>

/** The decoded record (the other response modes answer the raw response). */
export type Decoded<A> = Exclude<A, HttpClientResponse.HttpClientResponse | readonly [unknown, HttpClientResponse.HttpClientResponse]>

type LooseMethod<F> = F extends (request: infer Req) => Effect.Effect<infer A, infer E, infer R>
  ? [OptionalParts<Exclude<Req, void>>] extends [never] ? F
  : F & ({} extends LooseRequest<Exclude<Req, void>> ? (request?: LooseRequest<Exclude<Req, void>>) => Effect.Effect<Decoded<A>, E, R>
    : (request: LooseRequest<Exclude<Req, void>>) => Effect.Effect<Decoded<A>, E, R>)
  : F

/** A derived client (`HttpApiClient.ForApi`) whose methods accept requests without their optional parts. */
export type Client<C> = {
  readonly [K in keyof C]: C[K] extends (...args: ReadonlyArray<any>) => any ? LooseMethod<C[K]>
    : { readonly [M in keyof C[K]]: LooseMethod<C[K][M]> }
}

/** The loosened client of an API. */
export type ForApi<Api extends HttpApi.Constraint> = Client<HttpApiClient.ForApi<Api>>

type Method = (request?: Record<string, unknown>) => unknown

/** `{}` where a request leaves a part out: the encoder reads the part as a whole and would refuse `undefined`. */
const fill = (method: Method): Method => (request) =>
  method(request === undefined ? undefined : { headers: {}, query: {}, ...request })

/** Wraps every method of a derived client (groups of methods and top-level methods alike). */
export const loosen = <C>(client: C): Client<C> => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(client as Record<string, unknown>)) {
    out[key] = typeof value === "function"
      ? fill(value as Method)
      : Object.fromEntries(Object.entries(value as Record<string, Method>).map(([name, method]) => [name, fill(method)]))
  }
  return out as Client<C>
}
