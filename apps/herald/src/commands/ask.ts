/**
 * `herald ask TITLE`: a shell script asks the person an approval or a yes/no
 * question on the phone and branches on the exit code (0 approved/yes,
 * 1 denied/no, 2 no answer, 3 an error — see docs/cli.md). The outcome is one
 * word on stdout, or the whole Interaction with `--json`.
 *
 * `--on-timeout deny|allow` turns "no answer" into an exit of 1 or 0 and gives
 * the prompt the matching `defaultOnTimeout`, so the server's record, events
 * and webhooks say the same (`timedOut: true`). `--on-error deny|allow` turns
 * an error — also an interrupt — into 1 or 0; by default (`ask`) it is 3.
 */
import { Console, Effect, Option } from "effect"
import type { InteractionKind } from "@herald/api"
import { Argument, Command, Flag } from "effect/cli"
import { ASK_EXIT, CHOICES, exitWith, MAX_TIMEOUT, TITLE_MAX, unanswered } from "./gate.ts"
import type { Choice, Outcome } from "./gate.ts"

/** The client, loaded when the command runs (not for `--help` or other commands). */
const gateClient = Effect.promise(() => import("./gateClient.ts"))

/** The exit code a choice gives to "no answer" and to an error. */
const unansweredExit = { deny: ASK_EXIT.no, allow: ASK_EXIT.yes, ask: ASK_EXIT.unanswered } as const
const errorExit = { deny: ASK_EXIT.no, allow: ASK_EXIT.yes, ask: ASK_EXIT.error } as const

/** The prompt's own default for a choice: what it resolves with at expiry (none for `ask`). */
const defaultAnswer = (choice: Choice, kind: InteractionKind): string | undefined =>
  choice === "ask" ? undefined : kind === "yes_no" ? (choice === "deny" ? "no" : "yes") : choice === "deny" ? "denied" : "approved"

const exitCodeOf = (outcome: Outcome, onTimeout: Choice): number => {
  if (unanswered(outcome)) return unansweredExit[onTimeout]
  const status = outcome.interaction.status
  return status === "approved" || status === "yes" ? ASK_EXIT.yes : ASK_EXIT.no
}

/** The word on stdout: the answer, `expired`/`canceled`, or `timed out` when nobody answered in time (our deadline, or the default). */
const wordOf = (outcome: Outcome): string =>
  outcome._tag === "TimedOut" || outcome.interaction.timedOut ? "timed out" : outcome.interaction.status

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
  onTimeout: Flag.Literals("on-timeout", CHOICES).pipe(
    Flag.withDescription(
      "No answer in time (expiry or --timeout): deny (exit 1), allow (exit 0) or ask (exit 2, default); deny and " +
        "allow also make it the prompt's defaultOnTimeout (denied/no, approved/yes)"
    ),
    Flag.optional
  ),
  defaultOnTimeout: Flag.Literals("default-on-timeout", ["deny", "allow"]).pipe(
    Flag.withDescription("The earlier name of --on-timeout (deny or allow)"),
    Flag.optional
  ),
  onError: Flag.Literals("on-error", CHOICES).pipe(
    Flag.withDescription(
      "On an error (unreachable, refused token, server error, interrupt): deny (exit 1), allow (exit 0) or ask (exit 3, default)"
    ),
    Flag.withDefault("ask" as const)
  ),
  json: Flag.Boolean("json").pipe(
    Flag.withDescription("Print the whole Interaction as JSON instead of one word"),
    Flag.withDefault(false)
  )
}, ({ body, defaultOnTimeout, json, kind, onError, onTimeout, timeout, title }) => {
  const onNoAnswer: Choice = Option.getOrElse(Option.orElse(onTimeout, () => defaultOnTimeout), () => "ask" as const)
  const failed = (message: string) => Effect.andThen(Console.error(`herald: ${message}`), exitWith(errorExit[onError]))
  return Effect.flatMap(gateClient, ({ askAndWait, withClient }) =>
    withClient(askAndWait({
      kind,
      title: title.trim(),
      prompt: Option.getOrElse(Option.filter(body, (b) => b.trim() !== ""), () => title.trim()),
      timeoutSeconds: timeout,
      defaultOnTimeout: defaultAnswer(onNoAnswer, kind)
    }))).pipe(
    Effect.flatMap((outcome) =>
      Effect.andThen(
        Console.log(json ? JSON.stringify(outcome.interaction) : wordOf(outcome)),
        exitWith(exitCodeOf(outcome, onNoAnswer))
      )),
    Effect.catchTag("GateError", (error) => failed(error.message)),
    // A crash is an error too: --on-error decides, never a stack trace's exit 1 (which reads as "denied").
    Effect.catchDefect((defect) => failed(`unexpected failure: ${String(defect)}`)),
    // Ctrl-C or SIGTERM while waiting: the prompt is canceled (gateClient.ts), and the exit says "error".
    Effect.onInterrupt(() => exitWith(errorExit[onError]))
  )
}).pipe(
  Command.withDescription(
    "Ask the person an approval or yes/no question on the phone and wait (HERALD_URL, HERALD_TOKEN); " +
      "prints the answer; exit 0 approved/yes, 1 denied/no, 2 no answer (expired or timed out), 3 error"
  )
)
