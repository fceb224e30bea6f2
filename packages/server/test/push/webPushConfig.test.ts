/** The VAPID contact (`sub`) Herald signs Web Push with: `HERALD_WEBPUSH_SUBJECT`, else the public URL, else a placeholder. */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Option } from "effect"
import { pushConfig } from "../../src/config/PushConfig.ts"
import { vapidSubject } from "../../src/push/WebPushProvider.ts"

const subjectOf = (value: string) =>
  Effect.map(Effect.exit(pushConfig.parse(ConfigProvider.fromUnknown({ HERALD_WEBPUSH_SUBJECT: value }))), (exit) =>
    Exit.isSuccess(exit) ? Option.getOrUndefined(exit.value.webPushSubject) : "refused")

describe("Web Push subject", () => {
  it.effect("takes an email address (as mailto:), a mailto: URI or an https URL; refuses anything else at start", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* subjectOf("ops@example.test"), "mailto:ops@example.test")
      assert.strictEqual(yield* subjectOf("mailto:ops@example.test"), "mailto:ops@example.test")
      assert.strictEqual(yield* subjectOf("https://herald.example.test/contact"), "https://herald.example.test/contact")
      assert.strictEqual(yield* subjectOf(" "), undefined)
      for (const bad of ["http://herald.example.test", "https://localhost:8080", "ops", "mailto:nobody", "ftp://x.test"]) {
        assert.strictEqual(yield* subjectOf(bad), "refused", bad)
      }
    }))

  it("unset, is the public URL's origin when it is https on a real host, else a placeholder contact", () => {
    assert.strictEqual(vapidSubject(undefined, "https://herald.example.test/base"), "https://herald.example.test")
    assert.strictEqual(vapidSubject(undefined, "http://localhost:8080"), "mailto:webpush@localhost")
    assert.strictEqual(vapidSubject(undefined, "https://localhost:8443"), "mailto:webpush@localhost")
    assert.strictEqual(vapidSubject("mailto:ops@example.test", "https://herald.example.test"), "mailto:ops@example.test")
  })
})
