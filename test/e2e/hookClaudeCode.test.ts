/**
 * `herald hook claude-code` end to end: Claude Code's PreToolUse input on
 * stdin, a real `herald serve`, the person answering on a registered phone
 * through the Person API, and the decision JSON on stdout (exit 0). When no
 * decision can be had (malformed input, no token, a usage error) the hook
 * exits 1 — Claude Code's non-blocking error — never 2, which would block.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { spawn } from "node:child_process"
import { answerOnPhone, Gate, GateLayer, shownOnPhone } from "../support/gate.ts"
import { cli, heraldArgs } from "../support/process.ts"

/** A PreToolUse input as Claude Code sends it for a Bash call. */
const preToolUse = (command: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    session_id: "abc123",
    transcript_path: "/home/dev/.claude/projects/app/abc123.jsonl",
    cwd: "/home/dev/app",
    permission_mode: "default",
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command, description: "Remove the build output" },
    tool_use_id: "toolu_01ABC",
    ...extra
  })

const hook = (stdin: string, args: ReadonlyArray<string> = [], env?: Record<string, string>) =>
  Effect.flatMap(Gate, (gate) => Effect.forkChild(cli(["hook", "claude-code", ...args], env ?? gate.env, { stdin })))

const decisionOf = (stdout: string) =>
  (JSON.parse(stdout) as { hookSpecificOutput: { hookEventName: string; permissionDecision: string; permissionDecisionReason: string } })
    .hookSpecificOutput

layer(GateLayer, { timeout: "120 seconds", excludeTestServices: true })("herald hook claude-code", (it) => {
  it.effect("approved on the phone: allow JSON, exit 0; the phone shows the command and where it runs", () =>
    Effect.gen(function*() {
      const running = yield* hook(preToolUse("rm -rf build"))
      const shown = yield* answerOnPhone("Bash: rm -rf build", "approved")
      assert.strictEqual(shown.kind, "approval")
      assert.include(shown.prompt, "/home/dev/app")
      assert.include(shown.prompt, "rm -rf build")
      assert.include(shown.prompt, "Remove the build output")
      const result = yield* Fiber.join(running)
      assert.strictEqual(result.code, 0, result.stderr)
      const decision = decisionOf(result.stdout)
      assert.deepStrictEqual([decision.hookEventName, decision.permissionDecision], ["PreToolUse", "allow"])
      assert.include(decision.permissionDecisionReason, "Approved on the phone")
    }))

  it.effect("denied on the phone: deny JSON with a reason for the agent, exit 0", () =>
    Effect.gen(function*() {
      const running = yield* hook(preToolUse("git push --force origin main"))
      yield* answerOnPhone("Bash: git push --force origin main", "denied")
      const result = yield* Fiber.join(running)
      assert.strictEqual(result.code, 0, result.stderr)
      const decision = decisionOf(result.stdout)
      assert.strictEqual(decision.permissionDecision, "deny")
      assert.include(decision.permissionDecisionReason, "denied")
    }))

  it.effect("a long multi-line command: the title is one line cut to 200 characters", () =>
    Effect.gen(function*() {
      const command = `for f in *.log; do\n  gzip "$f"\ndone && ${"echo done; ".repeat(40)}`
      const running = yield* hook(preToolUse(command))
      const title = `Bash: ${command.replace(/\s+/g, " ").trim()}`.slice(0, 199) + "…"
      const shown = yield* answerOnPhone(title, "approved")
      assert.strictEqual(shown.title.length, 200)
      assert.include(shown.prompt, command)
      assert.strictEqual(decisionOf((yield* Fiber.join(running)).stdout).permissionDecision, "allow")
    }))

  it.effect("no answer in time: ask by default (Claude Code's own prompt); --default-on-timeout deny or allow", () =>
    Effect.gen(function*() {
      const { agent } = yield* Gate
      const asked = yield* Fiber.join(yield* hook(preToolUse("make deploy"), ["--timeout", "1"]))
      assert.strictEqual(asked.code, 0, asked.stderr)
      const decision = decisionOf(asked.stdout)
      assert.strictEqual(decision.permissionDecision, "ask")
      assert.include(decision.permissionDecisionReason, "No answer on the phone within 1 s")
      // The prompt was canceled: nothing left pending for this token.
      assert.deepStrictEqual((yield* agent.interactions.list()).items.filter((i) => i.title === "Bash: make deploy"), [])

      const denied = yield* Fiber.join(yield* hook(preToolUse("make deploy"), ["--timeout", "1", "--default-on-timeout", "deny"]))
      assert.strictEqual(decisionOf(denied.stdout).permissionDecision, "deny")
      const allowed = yield* Fiber.join(yield* hook(preToolUse("make deploy"), ["--timeout", "1", "--default-on-timeout", "allow"]))
      assert.strictEqual(decisionOf(allowed.stdout).permissionDecision, "allow")
    }))

  it.effect("killed while waiting (Claude Code's own hook timeout): the prompt is canceled on the phone", () =>
    Effect.gen(function*() {
      const { agent, env } = yield* Gate
      const child = spawn(process.execPath, heraldArgs(["hook", "claude-code"]), {
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
        stdio: ["pipe", "pipe", "pipe"]
      })
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
      child.stdin.end(preToolUse("terraform destroy"))
      yield* Effect.gen(function*() {
        const shown = yield* shownOnPhone("Bash: terraform destroy")
        child.kill("SIGTERM")
        yield* Effect.promise(() => exited)
        assert.strictEqual((yield* agent.interactions.get({ params: { id: shown.id } })).status, "canceled")
      }).pipe(Effect.ensuring(Effect.sync(() => child.kill("SIGKILL"))))
    }))

  it.effect("malformed stdin: a clear message on stderr and exit 1 (non-blocking), nothing on stdout", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [string, string]> = [
        ["", "stdin is empty"],
        ["rm -rf /", "it is not JSON"],
        [JSON.stringify({ hook_event_name: "PreToolUse", tool_name: "Bash" }), "Missing key at [\"tool_input\"]"],
        [preToolUse("ls", { hook_event_name: "PostToolUse" }), "register it under \"PreToolUse\""]
      ]
      for (const [stdin, reason] of cases) {
        const result = yield* Fiber.join(yield* hook(stdin))
        assert.strictEqual(result.code, 1, stdin)
        assert.strictEqual(result.stdout, "")
        assert.include(result.stderr, "herald: hook claude-code expects Claude Code's PreToolUse hook input")
        assert.include(result.stderr, reason)
      }
    }))

  it.effect("no token or a usage error: exit 1 (non-blocking), never 2 (which blocks the tool call)", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* Gate
      const noToken = yield* Fiber.join(yield* hook(preToolUse("ls"), [], { HERALD_URL: baseUrl }))
      assert.deepStrictEqual([noToken.code, noToken.stdout], [1, ""])
      assert.include(noToken.stderr, "herald: HERALD_TOKEN is not set")

      const usage = yield* Fiber.join(yield* hook(preToolUse("ls"), ["--default-on-timeout", "maybe"]))
      assert.strictEqual(usage.code, 1)
      assert.include(usage.stderr, "--default-on-timeout")
    }))
})
