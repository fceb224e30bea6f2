/**
 * The framework floor: a bare Effect HttpApi server with one GET endpoint that
 * answers a fixed `TokenStatus` (the auth-status record), with no middleware,
 * no authentication, no logging and no metrics. Herald's auth status measured
 * against it shows what Herald's own layers cost over the stack it is built on.
 */
import { TokenStatus, TokenStatusToken } from "@herald/api"
import { Effect, Layer } from "effect"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { bareServer, runPrintingPort } from "./bareServer.ts"

const Api = HttpApi.make("floor").add(
  HttpApiGroup.make("auth").add(HttpApiEndpoint.get("status", "/status", { success: TokenStatus }))
)

const status = new TokenStatus({
  authenticated: true,
  userId: "usr_01jbench0000000000000000",
  token: new TokenStatusToken({
    id: "tok_01jbench0000000000000000",
    name: "bench",
    prefix: "hld_AbCdEfGh",
    scopes: [],
    createdAt: "2026-01-01T00:00:00.000Z",
    lastUsedAt: null,
    expiresAt: null
  })
})

const Handlers = HttpApiBuilder.group(Api, "auth", (handlers) => handlers.handle("status", () => Effect.succeed(status)))

const port = Number(process.argv[2] ?? 0)
runPrintingPort(bareServer(HttpApiBuilder.layer(Api).pipe(Layer.provide(Handlers)), port), port)
