/**
 * `herald ask` end to end: a real `herald serve`, the CLI as a child process
 * waiting on the prompt, and the person answering on a registered phone
 * through the Person API. Exit codes: 0 approved/yes, 1 denied/no, 2 expired
 * or timed out (unless `--default-on-timeout`), 3 any error — a usage error
 * too, so a typo never reads as "expired".
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { answerOnPhone, Gate, GateLayer, shownOnPhone } from "../support/gate.ts"
import { cli } from "../support/process.ts"

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
      const result = yield* Fiber.join(yield* ask(["Nobody answers this", "--timeout", "1", "--json"]))
      assert.strictEqual(result.code, 2)
      const interaction = JSON.parse(result.stdout) as { id: string; status: string }
      assert.strictEqual(interaction.status, "canceled")
      assert.strictEqual((yield* agent.interactions.get({ params: { id: interaction.id } })).status, "canceled")
      assert.isFalse((yield* app.interactions.list()).items.some((i) => i.id === interaction.id), "gone from the phone")

      const plain = yield* Fiber.join(yield* ask(["Nobody answers this either", "--timeout", "1"]))
      assert.deepStrictEqual([plain.code, plain.stdout], [2, "timed out\n"])
    }))

  it.effect("--default-on-timeout allow exits 0 on a timeout, deny exits 1", () =>
    Effect.gen(function*() {
      const allowed = yield* Fiber.join(yield* ask(["Allowed by default", "--timeout", "1", "--default-on-timeout", "allow"]))
      assert.deepStrictEqual([allowed.code, allowed.stdout], [0, "timed out\n"])
      const denied = yield* Fiber.join(yield* ask(["Denied by default", "--timeout", "1", "--default-on-timeout", "deny"]))
      assert.deepStrictEqual([denied.code, denied.stdout], [1, "timed out\n"])
    }))

  it.effect("the prompt expires while waiting: prints expired and exits 2 (1 with --default-on-timeout deny)", () =>
    Effect.gen(function*() {
      const { expireNow } = yield* Gate
      const running = yield* ask(["Expires while waiting"])
      yield* expireNow((yield* shownOnPhone("Expires while waiting")).id)
      const result = yield* Fiber.join(running)
      assert.deepStrictEqual([result.code, result.stdout], [2, "expired\n"])

      const denying = yield* ask(["Expires, denied by default", "--default-on-timeout", "deny"])
      yield* expireNow((yield* shownOnPhone("Expires, denied by default")).id)
      const denied = yield* Fiber.join(denying)
      assert.deepStrictEqual([denied.code, denied.stdout], [1, "expired\n"])
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
