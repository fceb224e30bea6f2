/**
 * `herald ask TITLE`: a shell script asks the person an approval or a yes/no
 * question on the phone and branches on the exit code (0 approved/yes,
 * 1 denied/no, 2 expired or timed out, 3 an error — see docs/cli.md). The
 * outcome is one word on stdout, or the whole Interaction with `--json`.
 */
import { Console, Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { ASK_EXIT, exitWith, MAX_TIMEOUT, TITLE_MAX } from "./gate.ts"
import type { Outcome } from "./gate.ts"

/** The client, loaded when the command runs (not for `--help` or other commands). */
const gateClient = Effect.promise(() => import("./gateClient.ts"))

/** The exit code of an outcome; `--default-on-timeout` turns "no answer" into an answer. */
const exitCodeOf = (outcome: Outcome, onTimeout: Option.Option<"allow" | "deny">): number => {
  if (outcome._tag !== "Answered") {
    return Option.match(onTimeout, {
      onNone: () => ASK_EXIT.unanswered,
      onSome: (d) => d === "allow" ? ASK_EXIT.yes : ASK_EXIT.no
    })
  }
  const status = outcome.interaction.status
  return status === "approved" || status === "yes" ? ASK_EXIT.yes : ASK_EXIT.no
}

/** The word on stdout: the prompt's status, or `timed out` when we stopped waiting (the prompt is then `canceled`). */
const wordOf = (outcome: Outcome): string => outcome._tag === "TimedOut" ? "timed out" : outcome.interaction.status

export const ask = Command.make("ask", {
  title: Argument.String("title").pipe(
    Argument.withDescription(`The question as the phone shows it (1-${TITLE_MAX} characters; longer is cut with "…")`),
    Argument.filter((t) => t.trim() !== "", () => "TITLE must not be empty")
  ),
  body: Flag.String("body").pipe(
    Flag.withDescription("More detail under the title (up to 4000 characters; default: the title)"),
    Flag.optional
  ),
  kind: Flag.Literals("kind", ["approval", "yes_no"]).pipe(
    Flag.withDescription("approval (approved/denied) or yes_no (yes/no)"),
    Flag.withDefault("approval" as const)
  ),
  timeout: Flag.Int("timeout").pipe(
    Flag.withDescription(
      `Stop waiting after this many seconds (1-${MAX_TIMEOUT}) and cancel the prompt; default: until it expires (1 hour)`
    ),
    Flag.filter((t) => t >= 1 && t <= MAX_TIMEOUT, (t) => `--timeout must be 1-${MAX_TIMEOUT} seconds, not ${t}`),
    Flag.optional
  ),
  defaultOnTimeout: Flag.Literals("default-on-timeout", ["deny", "allow"]).pipe(
    Flag.withDescription("On expiry or timeout exit as if denied (1) or allowed (0) instead of 2"),
    Flag.optional
  ),
  json: Flag.Boolean("json").pipe(
    Flag.withDescription("Print the whole Interaction as JSON instead of one word"),
    Flag.withDefault(false)
  )
}, ({ body, defaultOnTimeout, json, kind, timeout, title }) =>
  Effect.flatMap(gateClient, ({ askAndWait, withClient }) =>
    withClient(askAndWait({
      kind,
      title: title.trim(),
      prompt: Option.getOrElse(Option.filter(body, (b) => b.trim() !== ""), () => title.trim()),
      timeoutSeconds: timeout
    }))).pipe(
    Effect.flatMap((outcome) =>
      Effect.andThen(
        Console.log(json ? JSON.stringify(outcome.interaction) : wordOf(outcome)),
        exitWith(exitCodeOf(outcome, defaultOnTimeout))
      )),
    Effect.catchTag("GateError", (error) => Effect.andThen(Console.error(`herald: ${error.message}`), exitWith(ASK_EXIT.error)))
  )).pipe(
    Command.withDescription(
      "Ask the person an approval or yes/no question on the phone and wait (HERALD_URL, HERALD_TOKEN); " +
        "prints the answer; exit 0 approved/yes, 1 denied/no, 2 expired or timed out, 3 error"
    )
  )
