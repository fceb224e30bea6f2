/**
 * Agent API handlers of mini-app packages. Publish reads the request's raw
 * bytes (the body the route already decoded, cached by the request) so the
 * stored archive is exactly what was sent; 200 answers a package published
 * before with the same bytes (201 when new). The archive route answers the
 * stored bytes with their digest in headers.
 */
import { AgentApi, CurrentAgent, MiniAppPackage, MiniAppPackageList, MiniAppSigningKeyList } from "@herald/api"
import { Effect, Schema } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Packages } from "./Packages.ts"
import { Signing } from "./Signing.ts"

// Checks on, as the group encodes (api/agent/MiniApps.ts).
const encodePackage = Schema.encodeSync(MiniAppPackage)

export const MiniAppsHandlers = HttpApiBuilder.group(AgentApi, "miniApps", Effect.fn(function*(handlers) {
  const packages = yield* Packages
  const signing = yield* Signing
  return handlers
    .handle("list", () =>
      Effect.flatMap(CurrentAgent, (agent) => packages.list(agent.userId)).pipe(
        Effect.map((items) => new MiniAppPackageList({ items }))
      ))
    .handle("keys", () => Effect.map(signing.keys, (keys) => new MiniAppSigningKeyList({ keys })))
    .handle("get", ({ params }) => Effect.flatMap(CurrentAgent, (agent) => packages.get(agent.userId, params.packageId)))
    .handle("archive", ({ params }) =>
      Effect.gen(function*() {
        const agent = yield* CurrentAgent
        const { archive, archiveSha256 } = yield* packages.archive(agent.userId, params.packageId)
        return HttpServerResponse.uint8Array(archive, {
          contentType: "application/json",
          headers: {
            "repr-digest": `sha-256=:${Buffer.from(archiveSha256, "hex").toString("base64")}:`,
            "x-archive-sha256": archiveSha256,
            "cache-control": "private, max-age=31536000, immutable"
          }
        })
      }))
    .handle("publish", ({ payload }) =>
      Effect.gen(function*() {
        const agent = yield* CurrentAgent
        const request = yield* HttpServerRequest.HttpServerRequest
        // The same cached bytes the payload was decoded from.
        const raw = new Uint8Array(yield* Effect.orDie(request.arrayBuffer))
        const { created, pkg } = yield* packages.publish(agent.userId, payload, raw)
        return created ? pkg : HttpServerResponse.jsonUnsafe(encodePackage(pkg), { status: 200 })
      }))
}))
