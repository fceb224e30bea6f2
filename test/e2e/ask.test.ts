/**
 * `herald ask` end to end: a real `herald serve`, the CLI as a child process
 * waiting on the prompt, and the person answering on a registered phone
 * through the Person API. Exit codes: 0 approved/yes, 1 denied/no, 2 expired
 * or timed out (unless `--on-timeout`), 3 any error (unless `--on-error`) — a
 * usage error too, so a typo never reads as "expired". `--on-timeout deny|allow`
 * also gives the prompt its `defaultOnTimeout`: the server resolves it at
 * expiry with `timedOut: true`. `--on-error deny|allow` decides every error
 * path: unreachable, refused token, a server error, an interrupt.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { spawn } from "node:child_process"
import { answerOnPhone, Gate, GateLayer, shownOnPhone } from "../support/gate.ts"
import { cli, heraldArgs } from "../support/process.ts"
import { receiver } from "../support/prompts.ts"

/** `herald ask …` with the fixture's token, in the background while the test plays the person. */
const ask = (args: ReadonlyArray<string>, env?: Record<string, string>) =>
  Effect.flatMap(Gate, (gate) => Effect.forkChild(cli(["ask", ...args], env ?? gate.env)))

layer(GateLayer, { timeout: "120 seconds", excludeTestServices: true })("herald ask", (it) => {
  it.effect("approved on the phone: prints approved and exits 0", () =>
    Effect.gen(function*() {
      const running = yield* ask(["Deploy to production?", "--body", "Release 1.4.2 to eu-west"])
      const shown = yield* answerOnPhone("Deploy to production?", "approved")
      assert.strictEqual(shown.prompt, "Release 1.4.2 to eu-west")
      assert.strictEqual(shown.kind, "approval")
      const result = yield* Fiber.join(running)
      assert.deepStrictEqual([result.code, result.stdout, result.stderr], [0, "approved\n", ""])
    }))

  it.effect("denied: prints denied and exits 1; a yes_no question answers yes (0) or no (1)", () =>
    Effect.gen(function*() {
      const denied = yield* ask(["Drop the staging database?"])
      const shown = yield* answerOnPhone("Drop the staging database?", "denied")
      assert.strictEqual(shown.prompt, "Drop the staging database?", "the body defaults to the title")
      const deniedResult = yield* Fiber.join(denied)
      assert.deepStrictEqual([deniedResult.code, deniedResult.stdout], [1, "denied\n"])

      const yes = yield* ask(["Is the build green?", "--kind", "yes_no", "--json"])
      assert.strictEqual((yield* answerOnPhone("Is the build green?", "yes")).kind, "yes_no")
      const yesResult = yield* Fiber.join(yes)
      assert.strictEqual(yesResult.code, 0)
      const interaction = JSON.parse(yesResult.stdout) as { id: string; status: string; kind: string }
      assert.deepStrictEqual([interaction.status, interaction.kind], ["yes", "yes_no"])
      assert.match(interaction.id, /^int_/)

      const no = yield* ask(["Ship on Friday?", "--kind", "yes_no"])
      yield* answerOnPhone("Ship on Friday?", "no")
      const noResult = yield* Fiber.join(no)
      assert.deepStrictEqual([noResult.code, noResult.stdout], [1, "no\n"])
    }))

  it.effect("no answer within --timeout: prints timed out, exits 2 and cancels the prompt", () =>
    Effect.gen(function*() {
      const { agent, app } = yield* Gate
      // Both wait out their second side by side.
      const [result, plain] = yield* Effect.all([
        Effect.flatMap(ask(["Nobody answers this", "--timeout", "1", "--json"]), Fiber.join),
        Effect.flatMap(ask(["Nobody answers this either", "--timeout", "1"]), Fiber.join)
      ], { concurrency: 2 })
      assert.strictEqual(result.code, 2)
      const interaction = JSON.parse(result.stdout) as { id: string; status: string }
      assert.strictEqual(interaction.status, "canceled")
      assert.strictEqual((yield* agent.interactions.get({ params: { id: interaction.id } })).status, "canceled")
      assert.isFalse((yield* app.interactions.list()).items.some((i) => i.id === interaction.id), "gone from the phone")
      assert.deepStrictEqual([plain.code, plain.stdout], [2, "timed out\n"])
    }))

  it.effect("--default-on-timeout allow exits 0 on a timeout, deny exits 1", () =>
    Effect.gen(function*() {
      const [allowed, denied] = yield* Effect.all([
        Effect.flatMap(ask(["Allowed by default", "--timeout", "1", "--default-on-timeout", "allow"]), Fiber.join),
        Effect.flatMap(ask(["Denied by default", "--timeout", "1", "--default-on-timeout", "deny"]), Fiber.join)
      ], { concurrency: 2 })
      assert.deepStrictEqual([allowed.code, allowed.stdout], [0, "timed out\n"])
      assert.deepStrictEqual([denied.code, denied.stdout], [1, "timed out\n"])
    }))

  it.effect("the prompt expires while waiting: prints expired and exits 2 (1 with --default-on-timeout deny)", () =>
    Effect.gen(function*() {
      const { expireNow } = yield* Gate
      const running = yield* ask(["Expires while waiting"])
      yield* expireNow((yield* shownOnPhone("Expires while waiting")).id)
      const result = yield* Fiber.join(running)
      assert.deepStrictEqual([result.code, result.stdout], [2, "expired\n"])

      // The earlier flag name still works: the prompt resolves with its default (timed out), exit 1.
      const denying = yield* ask(["Expires, denied by default", "--default-on-timeout", "deny"])
      yield* expireNow((yield* shownOnPhone("Expires, denied by default")).id)
      const denied = yield* Fiber.join(denying)
      assert.deepStrictEqual([denied.code, denied.stdout], [1, "timed out\n"])
    }))

  it.effect("--on-timeout deny|allow gives the prompt its default answer: at expiry the server resolves it, timedOut", () =>
    Effect.gen(function*() {
      const { agent, expireNow } = yield* Gate
      const denying = yield* ask(["Deny unless answered", "--on-timeout", "deny", "--json"])
      const shown = yield* shownOnPhone("Deny unless answered")
      assert.strictEqual(shown.defaultOnTimeout, "denied")
      yield* expireNow(shown.id)
      const denied = yield* Fiber.join(denying)
      assert.strictEqual(denied.code, 1)
      const record = JSON.parse(denied.stdout) as { status: string; timedOut: boolean }
      assert.deepStrictEqual([record.status, record.timedOut], ["denied", true])
      const read = yield* agent.interactions.get({ params: { id: shown.id } })
      assert.deepStrictEqual([read.status, read.timedOut], ["denied", true])

      const allowing = yield* ask(["Yes unless answered", "--kind", "yes_no", "--on-timeout", "allow"])
      const yesNo = yield* shownOnPhone("Yes unless answered")
      assert.strictEqual(yesNo.defaultOnTimeout, "yes")
      yield* expireNow(yesNo.id)
      assert.deepStrictEqual(yield* Effect.map(Fiber.join(allowing), (r) => [r.code, r.stdout]), [0, "timed out\n"])

      // ask: no default on the prompt; it expires and the exit says "no answer".
      const asking = yield* ask(["Nobody decides", "--on-timeout", "ask"])
      const plain = yield* shownOnPhone("Nobody decides")
      assert.isNull(plain.defaultOnTimeout)
      yield* expireNow(plain.id)
      assert.deepStrictEqual(yield* Effect.map(Fiber.join(asking), (r) => [r.code, r.stdout]), [2, "expired\n"])

      // A person's answer wins over the default: exit by the answer, not timed out.
      const answered = yield* ask(["Answered before the default", "--on-timeout", "deny"])
      yield* answerOnPhone("Answered before the default", "approved")
      assert.deepStrictEqual(yield* Effect.map(Fiber.join(answered), (r) => [r.code, r.stdout]), [0, "approved\n"])
    }))

  it.effect("--on-error decides every error: unreachable, refused token, server error, no token (deny 1, allow 0, default 3)", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* Gate
      const failing = yield* receiver(() => ({ status: 503 }))
      const unreachable = { HERALD_URL: "http://127.0.0.1:1", HERALD_TOKEN: "hld_x" }
      const refused = { HERALD_URL: baseUrl, HERALD_TOKEN: "hld_nope" }
      const serverError = { HERALD_URL: failing.url, HERALD_TOKEN: "hld_x" }
      const noToken = { HERALD_URL: baseUrl }
      const cases = [
        ["unreachable", unreachable, [], 3, "cannot reach Herald"],
        ["unreachable", unreachable, ["--on-error", "deny"], 1, "cannot reach Herald"],
        ["refused token", refused, ["--on-error", "allow"], 0, "Herald refused HERALD_TOKEN"],
        ["refused token", refused, ["--on-error", "deny"], 1, "Herald refused HERALD_TOKEN"],
        ["server error", serverError, ["--on-error", "deny"], 1, "herald: "],
        ["server error", serverError, ["--on-error", "ask"], 3, "herald: "],
        ["no token", noToken, ["--on-error", "deny"], 1, "HERALD_TOKEN is not set"]
      ] as const
      const results = yield* Effect.forEach(cases, ([what, env, flags]) => Effect.flatMap(ask([`Error path: ${what}`, ...flags], env), Fiber.join), {
        concurrency: 4
      })
      cases.forEach(([what, , flags, code, message], i) => {
        const result = results[i]!
        assert.strictEqual(result.code, code, `${what} ${flags.join(" ")}: ${result.stderr}`)
        assert.strictEqual(result.stdout, "", what)
        assert.include(result.stderr, message, what)
      })
    }), 120_000)

  it.effect("interrupted while waiting (SIGINT, SIGTERM): the prompt is canceled; --on-error deny exits 1, by default 3", () =>
    Effect.gen(function*() {
      const { agent, env } = yield* Gate
      for (const [signal, flags, code] of [["SIGINT", ["--on-error", "deny"], 1], ["SIGTERM", [], 3]] as const) {
        const title = `Interrupted by ${signal}`
        const child = spawn(process.execPath, heraldArgs(["ask", title, ...flags]), {
          env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
          stdio: ["ignore", "pipe", "pipe"]
        })
        const exited = new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)))
        yield* Effect.gen(function*() {
          const shown = yield* shownOnPhone(title)
          child.kill(signal)
          assert.strictEqual(yield* Effect.promise(() => exited), code, signal)
          assert.strictEqual((yield* agent.interactions.get({ params: { id: shown.id } })).status, "canceled")
        }).pipe(Effect.ensuring(Effect.sync(() => child.kill("SIGKILL"))))
      }
    }))

  it.effect("errors exit 3 with a clear message, never 1 (denied) or 2 (expired)", () =>
    Effect.gen(function*() {
      const { baseUrl, readOnlyToken } = yield* Gate
      const noToken = yield* Fiber.join(yield* ask(["No token"], { HERALD_URL: baseUrl }))
      assert.strictEqual(noToken.code, 3)
      assert.strictEqual(noToken.stdout, "")
      assert.include(noToken.stderr, "herald: HERALD_TOKEN is not set")

      const badToken = yield* Fiber.join(yield* ask(["Bad token"], { HERALD_URL: baseUrl, HERALD_TOKEN: "hld_nope" }))
      assert.strictEqual(badToken.code, 3)
      assert.include(badToken.stderr, "herald: Herald refused HERALD_TOKEN")

      const readOnly = yield* Fiber.join(yield* ask(["Read only"], { HERALD_URL: baseUrl, HERALD_TOKEN: readOnlyToken }))
      assert.strictEqual(readOnly.code, 3)
      assert.include(readOnly.stderr, "herald: HERALD_TOKEN lacks the scope interactions:create (MISSING_SCOPE)")

      const unreachable = yield* Fiber.join(yield* ask(["Nobody home"], { HERALD_URL: "http://127.0.0.1:1", HERALD_TOKEN: "hld_x" }))
      assert.strictEqual(unreachable.code, 3)
      assert.include(unreachable.stderr, "herald: cannot reach Herald at http://127.0.0.1:1")

      // Usage errors: 3 here (2 is "expired" for ask), the reason on stderr.
      for (const [args, reason] of [
        [["Q", "--kind", "reply"], "--kind"],
        [["Q", "--timeout", "0"], "--timeout must be 1-604800 seconds"],
        [[], "title"]
      ] as const) {
        const usage = yield* Fiber.join(yield* ask(args))
        assert.strictEqual(usage.code, 3, args.join(" "))
        assert.include(usage.stderr, reason)
      }
    }))
})
