/**
 * The whole service in-process on a random port, on a fresh database, with
 * helpers that make a person, a session and API tokens through the Person API
 * exactly as the phone app would.
 */
import { HeraldClient, HeraldPersonClient } from "@herald/client"
import type { Scope } from "@herald/api"
import { ConfigProvider, Context, Effect, Layer } from "effect"
import { HttpServer } from "effect/http"
import { randomBytes } from "node:crypto"
import { Identity } from "../../packages/server/src/identity/Identity.ts"
import { CapabilitiesLayer, serviceLayer } from "../../packages/server/src/runtime/Server.ts"
import { TestSqlLayer } from "./database.ts"

export class TestServer extends Context.Service<TestServer, { readonly baseUrl: string }>()("test/TestServer") {}

const addressLayer = Layer.effect(TestServer, Effect.map(HttpServer.HttpServer, (server) => {
  if (server.address._tag === "UnixPathAddress") throw new Error("expected a TCP address")
  return { baseUrl: `http://127.0.0.1:${server.address.port}` }
}))

/**
 * The service (routes and workers, as `herald serve` composes them) and its database; tests reach
 * it over HTTP (and Identity for set-up). `env` stands in for the process environment of the
 * service's settings (rate limits, push delivery — `HERALD_PUSH_PAUSED: "true"` runs no outbox drain —, …).
 * With no `DATABASE_URL` among them its actor runtime is a single runner on any database (`ClusterMode` in
 * cluster/Cluster.ts), so timers follow the test's clock alone; real runners are tested in
 * packages/server/test/cluster/runners.test.ts and, as processes, in test/e2e/cluster.
 */
export const testServerLayer = (env: Record<string, string> = {}) =>
  addressLayer.pipe(
    Layer.provideMerge(serviceLayer({ port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(CapabilitiesLayer.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env))))),
    Layer.provideMerge(TestSqlLayer)
  )

export const TestServerLayer = testServerLayer()

export const uniqueEmail = (label = "p") => `${label}-${randomBytes(6).toString("hex")}@example.test`

/** A new person with a Person API session. */
export const makePerson = (label = "person") =>
  Effect.gen(function*() {
    const identity = yield* Identity
    const person = yield* identity.createUser({ email: uniqueEmail(label), name: label })
    const session = yield* identity.createSession(person.id)
    return { person, session: session.token }
  }).pipe(Effect.orDie)

/** The Person API client of a session. */
export const personClient = (session: string) =>
  Effect.flatMap(TestServer, ({ baseUrl }) =>
    Effect.provide(Effect.service(HeraldPersonClient), HeraldPersonClient.layer({ baseUrl, token: session, retries: 0 })))

/** The Agent API client of a token (or of any string, to test refusals). */
export const agentClient = (token: string) =>
  Effect.flatMap(TestServer, ({ baseUrl }) =>
    Effect.provide(Effect.service(HeraldClient), HeraldClient.layer({ baseUrl, token, retries: 0 })))

/** A person, and an API token with the given scopes created through the Person API. */
export const makeAgent = (scopes: ReadonlyArray<Scope>, options: { readonly expiresAt?: string } = {}) =>
  Effect.gen(function*() {
    const { person, session } = yield* makePerson("agent-owner")
    const app = yield* personClient(session)
    const created = yield* app.tokens.create({ payload: { name: "test agent", scopes: [...scopes], ...options } })
    const client = yield* agentClient(created.secret)
    return { person, session, app, token: created.token, secret: created.secret, client }
  }).pipe(Effect.orDie)

/** Raw fetch against the test server, for what the typed client cannot send (bad bodies, wrong types). */
export const rawFetch = (path: string, init: RequestInit = {}) =>
  Effect.flatMap(TestServer, ({ baseUrl }) =>
    Effect.promise(async () => {
      const response = await fetch(`${baseUrl}${path}`, init)
      const text = await response.text()
      let body: unknown = text
      try {
        body = JSON.parse(text)
      } catch {
        // not JSON: the test asserts on the text
      }
      return { status: response.status, headers: response.headers, body }
    }))

let deviceSeq = 0
/** A phone of the agent's person, registered through the Person API with a unique push token starting `token`. */
export const registerDevice = (
  agent: { readonly app: { readonly devices: Effect.Success<ReturnType<typeof personClient>>["devices"] } },
  token: string,
  platform: "ios" | "android" = "ios"
) =>
  agent.app.devices.register({
    payload: { platform, deviceName: `phone ${++deviceSeq}`, pushToken: `${token}${deviceSeq}-${Date.now()}` }
  })
