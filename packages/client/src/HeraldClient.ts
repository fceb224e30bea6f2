/**
 * The typed client, derived from `@herald/api` — never written by hand.
 *
 * `HeraldClient` is the Scoped Agent API for Effect programs;
 * `HeraldPersonClient` is the Person API (session token). Transient failures
 * (connection errors, 429, 5xx) are retried with jittered backoff only for
 * idempotent methods (GET, HEAD, PUT, DELETE): a POST is never sent twice.
 * Request parts whose fields are all optional (`headers`, `query`) may be
 * left out (./Requests.ts).
 */
import { AgentApi, AgentAuth, AppApi, PersonAuth } from "@herald/api"
import { Context, Effect, Layer, Redacted, Schedule } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient, HttpApiMiddleware } from "effect/http-api"
import { loosen } from "./Requests.ts"
import type { ForApi } from "./Requests.ts"

export interface ClientOptions {
  /** Where Herald runs, e.g. `http://127.0.0.1:8080`. */
  readonly baseUrl: string
  /** An API token (`hld_…`) for the agent client, a session token (`hls_…`) for the person client. */
  readonly token: string | Redacted.Redacted<string>
  /** Retries of an idempotent call after a transient failure (default 2; 0 turns retries off). */
  readonly retries?: number
}

const idempotent = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"])

const retryIdempotent = (retries: number) => (client: HttpClient.HttpClient): HttpClient.HttpClient => {
  if (retries <= 0) return client
  const retrying = client.pipe(HttpClient.retryTransient({
    schedule: Schedule.exponential("100 millis").pipe(Schedule.jittered),
    times: retries
  }))
  return HttpClient.transform(client, (effect, request) => idempotent.has(request.method) ? retrying.execute(request) : effect)
}

const bearer = (token: string | Redacted.Redacted<string>) => (request: HttpClientRequest.HttpClientRequest) =>
  HttpClientRequest.bearerToken(request, typeof token === "string" ? token : Redacted.value(token))

export class HeraldClient extends Context.Service<HeraldClient, ForApi<typeof AgentApi>>()("herald/HeraldClient") {
  /** Needs an `HttpClient` (e.g. `FetchHttpClient.layer`). */
  static readonly layerNoDeps = (options: ClientOptions) =>
    Layer.effect(HeraldClient, Effect.map(HttpApiClient.make(AgentApi, {
      baseUrl: options.baseUrl,
      transformClient: retryIdempotent(options.retries ?? 2)
    }), loosen)).pipe(
      Layer.provide(HttpApiMiddleware.layerClient(AgentAuth, ({ next, request }) => next(bearer(options.token)(request))))
    )

  static readonly layer = (options: ClientOptions) => HeraldClient.layerNoDeps(options).pipe(Layer.provide(FetchHttpClient.layer))
}

export class HeraldPersonClient extends Context.Service<HeraldPersonClient, ForApi<typeof AppApi>>()(
  "herald/HeraldPersonClient"
) {
  static readonly layerNoDeps = (options: ClientOptions) =>
    Layer.effect(HeraldPersonClient, Effect.map(HttpApiClient.make(AppApi, {
      baseUrl: options.baseUrl,
      transformClient: retryIdempotent(options.retries ?? 2)
    }), loosen)).pipe(
      Layer.provide(HttpApiMiddleware.layerClient(PersonAuth, ({ next, request }) => next(bearer(options.token)(request))))
    )

  static readonly layer = (options: ClientOptions) =>
    HeraldPersonClient.layerNoDeps(options).pipe(Layer.provide(FetchHttpClient.layer))
}
