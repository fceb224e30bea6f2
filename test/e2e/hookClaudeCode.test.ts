/**
 * `herald hook claude-code` end to end: Claude Code's PreToolUse input on
 * stdin, a real `herald serve`, the person answering on a registered phone
 * through the Person API, and the decision JSON on stdout (exit 0). When no
 * decision can be had (malformed input, no token, a usage error) the hook
 * exits 1 — Claude Code's non-blocking error — never 2, which would block;
 * with `--on-error deny` it fails closed on every failure path instead
 * (unreachable, refused token, a server error, a response it cannot read,
 * bad input, SIGINT/SIGTERM while waiting): the deny decision, exit 0 — and a
 * usage error, whose help fills stdout, blocks with exit 2.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { spawn } from "node:child_process"
import { answerOnPhone, Gate, GateLayer, shownOnPhone } from "../support/gate.ts"
import { cli, heraldArgs } from "../support/process.ts"
import { receiver } from "../support/prompts.ts"

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

  it.effect("no answer in time: ask by default (Claude Code's own prompt); --on-timeout deny, ask or allow", () =>
    Effect.gen(function*() {
      const { agent } = yield* Gate
      const asked = yield* Fiber.join(yield* hook(preToolUse("make deploy"), ["--timeout", "1"]))
      assert.strictEqual(asked.code, 0, asked.stderr)
      const decision = decisionOf(asked.stdout)
      assert.strictEqual(decision.permissionDecision, "ask")
      assert.include(decision.permissionDecisionReason, "No answer on the phone within 1 s")
      // The prompt was canceled: nothing left pending for this token.
      assert.deepStrictEqual((yield* agent.interactions.list()).items.filter((i) => i.title === "Bash: make deploy"), [])

      // Each waits out its second, side by side; the last uses the earlier flag name, which still works.
      const runs = [["--on-timeout", "deny"], ["--on-timeout", "ask"], ["--on-timeout", "allow"], ["--default-on-timeout", "deny"]] as const
      const results = yield* Effect.forEach(runs, (flags) =>
        Effect.flatMap(hook(preToolUse("make deploy"), ["--timeout", "1", ...flags]), Fiber.join), { concurrency: 4 })
      for (const [i, [flag, choice]] of runs.entries()) {
        const result = results[i]!
        assert.strictEqual(result.code, 0, `${flag} ${choice}: ${result.stderr}`)
        assert.strictEqual(decisionOf(result.stdout).permissionDecision, choice, `${flag} ${choice}`)
      }
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

      const usage = yield* Fiber.join(yield* hook(preToolUse("ls"), ["--on-timeout", "maybe"]))
      assert.strictEqual(usage.code, 1)
      assert.include(usage.stderr, "--on-timeout")
    }))

  it.effect("--on-error deny fails closed on every failure path: the deny decision JSON, exit 0", () =>
    Effect.gen(function*() {
      const { baseUrl, env } = yield* Gate
      const failing = yield* receiver(() => ({ status: 500 }))
      const unreadable = yield* receiver(() => ({ status: 201 }))
      const paths: ReadonlyArray<readonly [string, string, Record<string, string>, string]> = [
        ["unreachable", preToolUse("ls"), { HERALD_URL: "http://127.0.0.1:1", HERALD_TOKEN: "hld_x" }, "cannot reach Herald"],
        ["bad token (401)", preToolUse("ls"), { HERALD_URL: baseUrl, HERALD_TOKEN: "hld_nope" }, "Herald refused HERALD_TOKEN"],
        ["server error (5xx)", preToolUse("ls"), { HERALD_URL: failing.url, HERALD_TOKEN: "hld_x" }, "herald: "],
        ["a response it cannot read", preToolUse("ls"), { HERALD_URL: unreadable.url, HERALD_TOKEN: "hld_x" }, "herald: "],
        ["no token", preToolUse("ls"), { HERALD_URL: baseUrl }, "HERALD_TOKEN is not set"],
        ["malformed input", "rm -rf /", env, "it is not JSON"]
      ]
      const results = yield* Effect.forEach(paths, ([, stdin, environment]) =>
        Effect.flatMap(hook(stdin, ["--on-error", "deny"], environment), Fiber.join), { concurrency: 3 })
      for (const [i, [what, , , message]] of paths.entries()) {
        const result = results[i]!
        assert.strictEqual(result.code, 0, `${what}: ${result.stderr}`)
        const decision = decisionOf(result.stdout)
        assert.deepStrictEqual([decision.hookEventName, decision.permissionDecision], ["PreToolUse", "deny"], what)
        assert.include(decision.permissionDecisionReason, "--on-error deny", what)
        assert.include(result.stderr, message, what)
      }
      // The same failure without --on-error: no decision, exit 1 (Claude Code's own rules decide).
      const open = yield* Fiber.join(yield* hook(preToolUse("ls"), [], { HERALD_URL: failing.url, HERALD_TOKEN: "hld_x" }))
      assert.deepStrictEqual([open.code, open.stdout], [1, ""])
      // ask and allow are decisions too.
      const asked = yield* Fiber.join(yield* hook(preToolUse("ls"), ["--on-error", "ask"], { HERALD_URL: failing.url, HERALD_TOKEN: "hld_x" }))
      assert.deepStrictEqual([asked.code, decisionOf(asked.stdout).permissionDecision], [0, "ask"])
      const allowed = yield* Fiber.join(yield* hook(preToolUse("ls"), ["--on-error", "allow"], { HERALD_URL: "http://127.0.0.1:1", HERALD_TOKEN: "hld_x" }))
      assert.deepStrictEqual([allowed.code, decisionOf(allowed.stdout).permissionDecision], [0, "allow"])
      // A usage error has the help on stdout: under --on-error deny the hook blocks the call with exit 2.
      const usage = yield* Fiber.join(yield* hook(preToolUse("ls"), ["--on-error", "deny", "--timeout", "0"]))
      assert.strictEqual(usage.code, 2)
      assert.include(usage.stderr, "--timeout")
    }), 120_000)

  it.effect("--on-error deny: SIGINT or SIGTERM while waiting prints the deny decision and cancels the prompt", () =>
    Effect.gen(function*() {
      const { agent, env } = yield* Gate
      for (const signal of ["SIGINT", "SIGTERM"] as const) {
        const command = `kubectl delete ns ${signal.toLowerCase()}`
        const child = spawn(process.execPath, heraldArgs(["hook", "claude-code", "--on-error", "deny"]), {
          env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
          stdio: ["pipe", "pipe", "pipe"]
        })
        let stdout = ""
        child.stdout.on("data", (d) => (stdout += d))
        const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
        child.stdin.end(preToolUse(command))
        yield* Effect.gen(function*() {
          const shown = yield* shownOnPhone(`Bash: ${command}`)
          child.kill(signal)
          assert.strictEqual(yield* Effect.promise(() => exited), 0, signal)
          const decision = decisionOf(stdout)
          assert.strictEqual(decision.permissionDecision, "deny", signal)
          assert.include(decision.permissionDecisionReason, "interrupted")
          assert.strictEqual((yield* agent.interactions.get({ params: { id: shown.id } })).status, "canceled")
        }).pipe(Effect.ensuring(Effect.sync(() => child.kill("SIGKILL"))))
      }
    }))
})
