/**
 * The `herald` command line (main.ts loads it and calls `runCli`): `serve`, `migrate`, `admin user create`,
 * `admin session create`, and the clients `ask` and `hook claude-code`. A
 * failure prints one line on stderr (the error's message, never a stack trace
 * for an expected error) and exits 1; a usage error (unknown command or flag,
 * a missing flag) prints the help and the reason and exits 2; a bare `herald`
 * prints the help and exits 0. `ask` and `hook` set their own exit codes
 * (docs/cli.md): `ask` exits 2 for "expired", so its usage errors exit 3, and a
 * hook's exit 2 blocks the agent's tool call, so its usage errors exit 1 (2 only
 * under `--on-error deny`, which asks to fail closed).
 *
 * Each command's module holds its flags and help; what it runs is imported
 * when it runs, so `--help` or `ask` never load the server.
 */
// Not the package's index: that loads every module of it, the Redis client among them.
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Cause, Config, ConfigProvider, Console, Effect, Exit, Predicate } from "effect"
import { CliError, Command } from "effect/cli"
import { admin } from "./commands/admin.ts"
import { ask } from "./commands/ask.ts"
import { usageExitCode } from "./commands/gate.ts"
import { hook } from "./commands/hook.ts"
import { migrate } from "./commands/migrate.ts"
import { serve } from "./commands/serve.ts"

const herald = Command.make("herald").pipe(
  Command.withDescription("Herald: reach a person's phone from agents and scripts"),
  Command.withSubcommands([serve, migrate, admin, ask, hook])
)

/** The message of an expected error: the spec's `error` field, else the error's own message. */
const describe = (error: unknown): string => {
  // A setting refused by Herald's own check: its message names the variable (config/), without its class's prefix.
  if (error instanceof Config.ConfigError && error.cause instanceof ConfigProvider.SourceError) return error.cause.message
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

/** `serve` could not listen: say which address and what to change, not just `ServeError`. */
const describeListen = (error: unknown): string | undefined => {
  if (!Predicate.isTagged(error, "ServeError") || !Predicate.hasProperty(error, "cause")) return undefined
  const cause = error.cause as { readonly code?: unknown; readonly address?: unknown; readonly port?: unknown }
  if (typeof cause !== "object" || cause === null || typeof cause.code !== "string") return undefined
  // Node's listen error names the address and port it tried.
  const where = cause.address === undefined ? "the configured HOST and PORT" : `${String(cause.address)}:${String(cause.port)}`
  switch (cause.code) {
    case "EADDRINUSE":
      return `${where} is already in use (EADDRINUSE); set PORT or HOST`
    case "EACCES":
      return `${where} needs privileges this process lacks (EACCES); set PORT above 1023`
    case "EADDRNOTAVAIL":
      return `${where} is not an address of this machine (EADDRNOTAVAIL); set HOST`
    default:
      return `cannot listen on ${where} (${cause.code})`
  }
}

/** Exit codes: 0 success or help, 1 a failure, 2 a usage error (its reason already on stderr, with the help). */
const exitWith = (code: number) => Effect.sync(() => { process.exitCode = code })

/** Runs the command line of `process.argv` to its exit (main.ts calls it; importing this module runs nothing). */
export const runCli = () => herald.pipe(
  Command.run({ version: "1.0.0" }),
  Effect.catchCause((cause) => {
    if (Cause.hasInterruptsOnly(cause)) return Effect.void
    const error = Cause.squash(cause)
    // effect/cli has already printed the help (and any parse errors) for these.
    if (CliError.isCliError(error) && error._tag === "ShowHelp") {
      return exitWith(error.errors.length === 0 ? 0 : usageExitCode(process.argv.slice(2)))
    }
    return Effect.flatMap(Console.error(`herald: ${describeListen(error) ?? describe(error)}`), () => exitWith(1))
  }),
  Effect.provide(NodeServices.layer),
  NodeRuntime.runMain({
    // SIGTERM/SIGINT interrupt `serve`: a graceful stop is a success (exit 0).
    teardown: (exit, onExit) =>
      onExit(Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause) ? Number(process.exitCode ?? 0) : 1)
  })
)
