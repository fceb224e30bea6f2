/** Defects and 5xx are logged with their cause; typed answers below 500 are not. */
import { assert, describe, it } from "@effect/vitest"
import { NotFound, InternalError, OAuthError, OAuthInvalidClient } from "@herald/api"
import { Effect, Logger } from "effect"
import { ErrorLoggingLayer } from "../../src/observability/ErrorLogging.ts"

const run = <E>(failing: Effect.Effect<never, E>) =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    const capture = Logger.make(({ logLevel, message }) => {
      lines.push(`${logLevel} ${String(Array.isArray(message) ? message[0] : message)}`)
    })
    yield* failing.pipe(
      Effect.withErrorReporting,
      Effect.exit,
      Effect.provide(ErrorLoggingLayer),
      Effect.provide(Logger.layer([capture]))
    )
    // The reporter logs on a fiber of its own.
    yield* Effect.sleep("20 millis")
    return lines
  })

describe("error logging", () => {
  it.live("a defect is logged at Error", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* run(Effect.die(new Error("boom"))), ["Error unexpected failure"])
    }))

  it.live("an INTERNAL_ERROR failure is logged", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* run(Effect.fail(new InternalError({ error: "x" }))), ["Error unexpected failure"])
    }))

  it.live("a NOT_FOUND answer is not logged", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* run(Effect.fail(new NotFound({ error: "x" }))), [])
    }))

  it.live("an OAuth refusal ({error, error_description}, no code) is not logged", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* run(Effect.fail(new OAuthError({ error: "invalid_grant" }))), [])
      assert.deepStrictEqual(yield* run(Effect.fail(new OAuthInvalidClient({ error: "invalid_client" }))), [])
    }))
})
