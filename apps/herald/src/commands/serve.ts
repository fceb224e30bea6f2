/** `herald serve`: run the service (migrations are applied at start). */
import { Layer } from "effect"
import { Command } from "effect/cli"
import { ServeLayer } from "@herald/server/runtime/Server"

export const serve = Command.make("serve", {}, () => Layer.launch(ServeLayer)).pipe(
  Command.withDescription("Serve the Agent API, the Person API and the docs (PORT, HOST, DATABASE_URL, … from the environment)")
)
