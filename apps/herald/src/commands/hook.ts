/**
 * `herald hook claude-code`: Claude Code's PreToolUse command hook. It reads
 * the hook input (JSON on stdin), asks the person on the phone to approve the
 * tool call, and prints Claude Code's decision JSON
 * (`hookSpecificOutput.permissionDecision` allow | deny | ask) with exit 0.
 *
 * When no decision can be had (bad input, no token, Herald unreachable or
 * refusing, a server error, a crash, an interrupt) it says why on stderr and
 * exits 1 by default: Claude Code treats that as a non-blocking error and goes
 * on with its own permission rules, as if the hook were not there. With
 * `--on-error deny|ask|allow` it prints that decision instead (exit 0), on
 * every one of those paths: `deny` fails closed. See docs/cli.md for the
 * settings snippet.
 */
import { Console, Effect, Option, Ref, Schema, Stdio, Stream } from "effect"
import { Command, Flag } from "effect/cli"
import { CHOICES, exitWith, GateError, HOOK_EXIT, MAX_TIMEOUT, PROMPT_MAX, TITLE_MAX, truncate, unanswered } from "./gate.ts"
import type { Choice, Outcome } from "./gate.ts"

/** The client, loaded when the hook runs (not for `--help` or other commands). */
const gateClient = Effect.promise(() => import("./gateClient.ts"))

/** Claude Code's PreToolUse input: the fields used here (it sends more, e.g. transcript_path, permission_mode). */
const PreToolUseInput = Schema.Struct({
  hook_event_name: Schema.String,
  tool_name: Schema.String.check(Schema.isMinLength(1)),
  tool_input: Schema.Record(Schema.String, Schema.Unknown),
  cwd: Schema.optionalKey(Schema.String),
  session_id: Schema.optionalKey(Schema.String)
})
type PreToolUseInput = typeof PreToolUseInput.Type

/** A Write tool's input carries the whole file; more than this is not a hook input we can describe. */
const MAX_INPUT_BYTES = 16 * 1024 * 1024
/** Default seconds to wait for the phone (Claude Code's own hook timeout must be longer; the docs' snippet sets 330). */
const DEFAULT_TIMEOUT = 300

const malformed = (reason: string) =>
  new GateError({
    message: `hook claude-code expects Claude Code's PreToolUse hook input (JSON) on stdin: ${reason.replace(/\s*\n\s*/g, " ")}`
  })

/** All of stdin as text, refusing a terminal (a person running the hook by hand would wait forever) and a flood. */
const readStdin = Effect.gen(function*() {
  const stdio = yield* Stdio.Stdio
  if (yield* stdio.stdinIsTerminal) return yield* malformed("stdin is a terminal")
  const chunks: Array<Uint8Array> = []
  let total = 0
  yield* stdio.stdin.pipe(
    Stream.mapError((e) => malformed(`cannot read stdin (${e.message})`)),
    Stream.runForEach((chunk) => {
      total += chunk.length
      if (total > MAX_INPUT_BYTES) return Effect.fail(malformed(`more than ${MAX_INPUT_BYTES} bytes`))
      chunks.push(chunk)
      return Effect.void
    })
  )
  const bytes = new Uint8Array(total)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.length
  }
  return new TextDecoder().decode(bytes)
})

const parseInput = (text: string) =>
  Effect.gen(function*() {
    if (text.trim() === "") return yield* malformed("stdin is empty")
    const json = yield* Effect.try({ try: () => JSON.parse(text) as unknown, catch: () => malformed("it is not JSON") })
    const input = yield* Schema.decodeUnknownEffect(PreToolUseInput)(json).pipe(
      Effect.mapError((e) => malformed(e.message))
    )
    if (input.hook_event_name !== "PreToolUse") {
      return yield* malformed(`hook_event_name is ${JSON.stringify(input.hook_event_name)}; register it under "PreToolUse"`)
    }
    return input
  })

/** The input field that names what a tool acts on, by Claude Code's tool names; other tools show their input as JSON. */
const subjectOf = (tool: string, input: Record<string, unknown>): string => {
  const field = ({
    Bash: "command",
    Edit: "file_path",
    MultiEdit: "file_path",
    Write: "file_path",
    Read: "file_path",
    NotebookEdit: "notebook_path",
    WebFetch: "url",
    WebSearch: "query",
    Glob: "pattern",
    Grep: "pattern",
    Task: "description",
    Agent: "description"
  } as Record<string, string | undefined>)[tool]
  const value = field === undefined ? undefined : input[field]
  return typeof value === "string" ? value : JSON.stringify(input)
}

/** The phone's title (one line, e.g. `Bash: rm -rf build`) and body (where, and the full input), cut to the API's limits. */
export const describeToolCall = (input: PreToolUseInput): { readonly title: string; readonly prompt: string } => {
  const subject = subjectOf(input.tool_name, input.tool_input)
  const title = truncate(`${input.tool_name}: ${subject.replace(/\s+/g, " ").trim()}`, TITLE_MAX)
  const where = input.cwd === undefined ? "" : ` in ${input.cwd}`
  const detail = input.tool_name === "Bash"
    ? [subject, typeof input.tool_input.description === "string" ? `(${input.tool_input.description})` : ""].filter((s) => s !== "").join("\n\n")
    : JSON.stringify(input.tool_input, null, 2)
  return { title, prompt: truncate(`Claude Code wants to use ${input.tool_name}${where}:\n\n${detail}`, PROMPT_MAX) }
}

type Decision = Choice

const decisionOf = (outcome: Outcome, onTimeout: Decision, timeout: number): { decision: Decision; reason: string } => {
  if (!unanswered(outcome)) {
    return outcome.interaction.status === "approved"
      ? { decision: "allow", reason: "Approved on the phone (Herald)." }
      : { decision: "deny", reason: "The person denied this tool call on the phone (Herald)." }
  }
  const why = outcome._tag === "TimedOut"
    ? `No answer on the phone within ${timeout} s (Herald)`
    : `The phone prompt ended unanswered (${outcome.interaction.timedOut ? "timed out" : outcome.interaction.status}, Herald)`
  const then = onTimeout === "ask" ? "asking here instead." : onTimeout === "allow" ? "allowed by default." : "denied by default."
  return { decision: onTimeout, reason: `${why}; ${then}` }
}

/** Claude Code's decision JSON on stdout (read with exit 0). */
const printDecision = (decision: Decision, reason: string) =>
  Console.log(JSON.stringify({
    hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: decision, permissionDecisionReason: reason }
  }))

const onErrorThen = { deny: "denied (--on-error deny).", ask: "asking here instead (--on-error ask).", allow: "allowed (--on-error allow)." }

const claudeCode = Command.make("claude-code", {
  timeout: Flag.Int("timeout").pipe(
    Flag.withDescription(
      `Seconds to wait for the phone (1-${MAX_TIMEOUT}, default ${DEFAULT_TIMEOUT}); keep it below the hook's own "timeout"`
    ),
    Flag.filter((t) => t >= 1 && t <= MAX_TIMEOUT, (t) => `--timeout must be 1-${MAX_TIMEOUT} seconds, not ${t}`),
    Flag.withDefault(DEFAULT_TIMEOUT)
  ),
  onTimeout: Flag.Literals("on-timeout", CHOICES).pipe(
    Flag.withDescription("The decision when the phone gives none in time: ask (Claude Code's own prompt, default), allow or deny"),
    Flag.optional
  ),
  defaultOnTimeout: Flag.Literals("default-on-timeout", CHOICES).pipe(
    Flag.withDescription("The earlier name of --on-timeout"),
    Flag.optional
  ),
  onError: Flag.Literals("on-error", CHOICES).pipe(
    Flag.withDescription(
      "The decision when none can be had (Herald unreachable, token refused, server error, bad input, crash, " +
        "interrupt): deny, ask or allow; default: exit 1, and Claude Code's own rules decide"
    ),
    Flag.optional
  )
}, ({ defaultOnTimeout, onError, onTimeout, timeout }) =>
  Effect.gen(function*() {
    const onNoAnswer: Decision = Option.getOrElse(Option.orElse(onTimeout, () => defaultOnTimeout), () => "ask" as const)
    // At most one decision reaches stdout, whatever ends the hook.
    const decided = yield* Ref.make(false)
    const decide = (decision: Decision, reason: string) =>
      Effect.flatMap(Ref.getAndSet(decided, true), (already) =>
        already ? Effect.void : Effect.andThen(printDecision(decision, reason), exitWith(HOOK_EXIT.decided)))
    const failed = (message: string) =>
      Effect.andThen(
        Console.error(`herald: ${message}`),
        Option.match(onError, {
          onNone: () => exitWith(HOOK_EXIT.error),
          onSome: (choice) => decide(choice, `Herald could not ask the phone (${message}); ${onErrorThen[choice]}`)
        })
      )
    return yield* Effect.gen(function*() {
      const input = yield* Effect.flatMap(readStdin, parseInput)
      const { askAndWait, withClient } = yield* gateClient
      const outcome = yield* withClient(askAndWait({ kind: "approval", ...describeToolCall(input), timeoutSeconds: Option.some(timeout) }))
      const { decision, reason } = decisionOf(outcome, onNoAnswer, timeout)
      yield* decide(decision, reason)
    }).pipe(
      Effect.catchTag("GateError", (error) => failed(error.message)),
      Effect.catchDefect((defect) => failed(`unexpected failure: ${String(defect)}`)),
      // Killed while waiting (SIGINT, SIGTERM): the prompt is canceled (gateClient.ts); with --on-error, its decision.
      Effect.onInterrupt(() =>
        Option.match(onError, {
          onNone: () => Effect.void,
          onSome: (choice) => decide(choice, `The hook was interrupted before the phone answered (Herald); ${onErrorThen[choice]}`)
        })
      )
    )
  })).pipe(
    Command.withDescription(
      "Claude Code PreToolUse hook: reads the hook input on stdin, asks the phone to approve the tool call, " +
        "prints the decision JSON (HERALD_URL, HERALD_TOKEN)"
    )
  )

export const hook = Command.make("hook").pipe(
  Command.withDescription("Coding-agent hooks that ask the phone before a tool runs"),
  Command.withSubcommands([claudeCode])
)
