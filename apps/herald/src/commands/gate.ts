/**
 * What `herald ask` and `herald hook claude-code` share to declare themselves:
 * limits, exit codes, the error and outcome types. Asking itself (the typed
 * client) is in gateClient.ts, imported only when one of them runs, so the
 * CLI's help and its other commands start without the client and the API.
 *
 * Client code only: importing the server here would slow every start of these
 * commands and let them reach the workers (a test walks the imports).
 */
import type { Interaction } from "@herald/api"
import { Data, Effect } from "effect"

export const DEFAULT_URL = "http://localhost:8080"

/** The API's bounds on a prompt's expiry (decisions.md: 60..604800 seconds). */
export const MIN_EXPIRY = 60
export const MAX_TIMEOUT = 604_800

/** A failure that is neither an answer nor a timeout: bad configuration, network, 401, 403… */
export class GateError extends Data.TaggedError("GateError")<{ readonly message: string }> {}

/** How a wait ended. `Unanswered` covers expiry and a cancel by someone else; `TimedOut` is our own deadline. */
export type Outcome =
  | { readonly _tag: "Answered"; readonly interaction: Interaction }
  | { readonly _tag: "Unanswered"; readonly interaction: Interaction }
  | { readonly _tag: "TimedOut"; readonly interaction: Interaction }

/** What `--on-timeout` and `--on-error` choose: fail closed, hand the decision back, or fail open. */
export const CHOICES = ["deny", "ask", "allow"] as const
export type Choice = typeof CHOICES[number]

/** Whether the outcome came without a person deciding: our own deadline, an expiry, a cancel, or a default answer at expiry. */
export const unanswered = (outcome: Outcome): boolean => outcome._tag !== "Answered" || outcome.interaction.timedOut

/** Cut `text` to `max` characters, marking the cut with "…". */
export const truncate = (text: string, max: number): string => text.length <= max ? text : `${text.slice(0, max - 1)}…`

/** The API's limits on a prompt's text (CreateInteractionRequest). */
export const TITLE_MAX = 200
export const PROMPT_MAX = 4000

/**
 * The exit code of a usage error (unknown flag, bad value) of `herald ask` and
 * `herald hook`: elsewhere 2, but `ask` exits 2 for "expired", so a typo must
 * not read as "no answer" (3, an error); and a hook's exit 2 makes Claude Code
 * block the tool call, so a misconfigured hook exits 1 (a non-blocking error).
 */
export const usageExitCode = (argv: ReadonlyArray<string>): number => {
  const command = argv.find((arg) => !arg.startsWith("-"))
  if (command === "hook") return failsClosed(argv) ? HOOK_EXIT.blocked : HOOK_EXIT.error
  return command === "ask" ? ASK_EXIT.error : 2
}

/**
 * Whether the hook's command line asks to fail closed (`--on-error deny`). A
 * usage error has the help on stdout, so no decision JSON can follow: the
 * hook blocks the call with Claude Code's exit 2 instead.
 */
const failsClosed = (argv: ReadonlyArray<string>): boolean =>
  argv.some((arg, i) => arg === "--on-error=deny" || (arg === "--on-error" && argv[i + 1] === "deny"))

/** `herald ask`: 0 approved/yes, 1 denied/no, 2 expired or timed out, 3 anything else (usage, network, 401, 403…). */
export const ASK_EXIT = { yes: 0, no: 1, unanswered: 2, error: 3 } as const
/**
 * `herald hook …`: 0 with a decision on stdout; 1 when no decision could be had (Claude Code goes on without the
 * hook); 2 blocks the tool call (only a usage error under `--on-error deny`).
 */
export const HOOK_EXIT = { decided: 0, error: 1, blocked: 2 } as const

/** Sets the process's exit code (cli.ts exits with it). */
export const exitWith = (code: number) => Effect.sync(() => { process.exitCode = code })
