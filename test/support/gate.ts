/**
 * The fixture of the command-line gate's end-to-end tests (`herald ask`,
 * `herald hook claude-code`): a real `herald serve` on a fresh database, a
 * person with a session and a registered (sandbox) phone, an API token for
 * the CLI, and the person's side: wait until a prompt shows on the phone,
 * then answer it through the Person API, as the app would.
 */
import { HeraldClient, HeraldPersonClient } from "@herald/client"
import { Context, Effect, Layer } from "effect"
import { childDatabase } from "./database.ts"
import { eventually } from "./eventually.ts"
import { startServer } from "./process.ts"
import { onDatabaseOf, personOn } from "./serverClients.ts"
import { moveDeadline } from "./prompts.ts"

type AppClient = HeraldPersonClient["Service"]
type AgentClient = HeraldClient["Service"]

export class Gate extends Context.Service<Gate, {
  readonly baseUrl: string
  /** The environment of a CLI run with a token holding interactions:create and interactions:read. */
  readonly env: Record<string, string>
  /** A token with interactions:read alone (POST /interactions answers 403 MISSING_SCOPE). */
  readonly readOnlyToken: string
  readonly app: AppClient
  readonly agent: AgentClient
  readonly deviceId: string
  /** Moves a pending prompt's deadline, as the passage of time would (the API's minimum expiry is a minute). */
  readonly expireNow: (id: string) => Effect.Effect<void>
}>()("test/Gate") {}

export const GateLayer = Layer.effect(Gate, Effect.gen(function*() {
  const { env: database } = yield* childDatabase
  const server = yield* startServer(database)
  // Set-up, not what is tested: made as `herald admin` makes people, without two CLI processes.
  const session = yield* personOn(database, { email: "gate@example.test", name: "Gate" })
  const app = yield* Effect.provide(
    Effect.service(HeraldPersonClient),
    HeraldPersonClient.layer({ baseUrl: server.baseUrl, token: session.session, retries: 0 })
  )
  const token = yield* app.tokens.create({ payload: { name: "gate", scopes: ["interactions:create", "interactions:read"] } })
  const readOnly = yield* app.tokens.create({ payload: { name: "read only", scopes: ["interactions:read"] } })
  const agent = yield* Effect.provide(
    Effect.service(HeraldClient),
    HeraldClient.layer({ baseUrl: server.baseUrl, token: token.secret, retries: 0 })
  )
  const device = yield* app.devices.register({ payload: { platform: "ios", deviceName: "phone", pushToken: `gate-${Date.now()}` } })
  return {
    baseUrl: server.baseUrl,
    env: { HERALD_URL: server.baseUrl, HERALD_TOKEN: token.secret },
    readOnlyToken: readOnly.secret,
    app,
    agent,
    deviceId: device.id,
    expireNow: (id: string) => Effect.asVoid(onDatabaseOf(database)(moveDeadline(id, Date.now())))
  }
}).pipe(Effect.orDie))

/** The pending prompt titled `title` once it shows on the person's phone (polled, never a fixed sleep). */
export const shownOnPhone = (title: string) =>
  Effect.flatMap(Gate, ({ app }) =>
    eventually(Effect.orDie(app.interactions.list()), (list) => list.items.some((i) => i.title === title)).pipe(
      Effect.map((list) => list.items.find((i) => i.title === title)!)
    ))

/** The person answers the prompt titled `title` on the phone as soon as it shows; returns the prompt as shown. */
export const answerOnPhone = (title: string, status: "approved" | "denied" | "yes" | "no") =>
  Effect.gen(function*() {
    const { app, deviceId } = yield* Gate
    const shown = yield* shownOnPhone(title)
    yield* Effect.orDie(app.interactions.answer({ params: { id: shown.id }, payload: { status, deviceId } }))
    return shown
  })
