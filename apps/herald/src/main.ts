#!/usr/bin/env node
/**
 * The `herald` executable: `serve`, `migrate`, `admin user create`,
 * `admin session create`. A failure prints one line on stderr (the error's
 * message, never a stack trace for an expected error) and exits 1.
 */
import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Cause, Console, Effect, Exit } from "effect"
import { Command } from "effect/cli"
import { admin } from "./commands/admin.ts"
import { migrate } from "./commands/migrate.ts"
import { serve } from "./commands/serve.ts"

const herald = Command.make("herald").pipe(
  Command.withDescription("Herald: reach a person's phone from agents and scripts"),
  Command.withSubcommands([serve, migrate, admin])
)

/** The message of an expected error: the spec's `error` field, else the error's own message. */
const describe = (error: unknown): string => {
  if (typeof error === "object" && error !== null) {
    if ("error" in error && typeof error.error === "string") {
      const issues = "issues" in error && Array.isArray(error.issues)
        ? ` (${error.issues.map((i: { path: string; message: string }) => `${i.path}: ${i.message}`).join("; ")})`
        : ""
      return `${error.error}${issues}`
    }
    if ("message" in error && typeof error.message === "string" && error.message !== "") return error.message
  }
  return String(error)
}

herald.pipe(
  Command.run({ version: "1.0.0" }),
  Effect.catchCause((cause) =>
    Cause.hasInterruptsOnly(cause)
      ? Effect.void
      : Effect.flatMap(
        Console.error(`herald: ${describe(Cause.squash(cause))}`),
        () => Effect.sync(() => { process.exitCode = 1 })
      )),
  Effect.provide(NodeServices.layer),
  NodeRuntime.runMain({
    // SIGTERM/SIGINT interrupt `serve`: a graceful stop is a success (exit 0).
    teardown: (exit, onExit) =>
      onExit(Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause) ? Number(process.exitCode ?? 0) : 1)
  })
)
