#!/usr/bin/env node
/**
 * The `herald` executable: `serve`, `migrate`, `admin user create`,
 * `admin session create`. Errors print one line on stderr and exit non-zero.
 */
import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Effect } from "effect"
import { Command } from "effect/cli"
import { admin } from "./commands/admin.ts"
import { migrate } from "./commands/migrate.ts"
import { serve } from "./commands/serve.ts"

const herald = Command.make("herald").pipe(
  Command.withDescription("Herald: reach a person's phone from agents and scripts"),
  Command.withSubcommands([serve, migrate, admin])
)

herald.pipe(
  Command.run({ version: "1.0.0" }),
  Effect.provide(NodeServices.layer),
  NodeRuntime.runMain
)
