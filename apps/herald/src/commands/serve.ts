/** `herald serve`: run the service (migrations are applied at start). */
import { Effect, Layer } from "effect"
import { Command } from "effect/cli"

/** The server's modules, loaded only by this command (the others never reach them). */
const server = Effect.promise(() => import("@herald/server/runtime/Server"))

export const serve = Command.make("serve", {}, () => Effect.flatMap(server, ({ ServeLayer }) => Layer.launch(ServeLayer))).pipe(
  Command.withDescription("Serve the Agent API, the Person API and the docs (PORT, HOST, DATABASE_URL, … from the environment)")
)
