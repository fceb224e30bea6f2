/** Reading the push configuration: which providers, defaults, and start-up errors. */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Exit, Option, Redacted } from "effect"
import { generateKeyPairSync } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ApnsHosts, pushConfig, pushEnvironmentVariables } from "../../src/config/PushConfig.ts"
import { makeApnsKey, makeServiceAccount } from "./support.ts"

const read = (env: Record<string, string>) => pushConfig.parse(ConfigProvider.fromUnknown(env))

/** The failure message of reading `env`, or undefined when it succeeds. */
const failure = (env: Record<string, string>) =>
  Effect.map(Effect.exit(read(env)), (exit) => Exit.isFailure(exit) ? String(Exit.findErrorOption(exit).pipe(Option.map((e) => e.message), Option.getOrElse(() => "defect"))) : undefined)

const apnsKey = makeApnsKey()
const apns = { APNS_KEY: apnsKey.pem, APNS_KEY_ID: "KEY7654321", APNS_TEAM_ID: "TEAM123456", APNS_TOPIC: "dev.herald.app" }
const serviceAccount = makeServiceAccount("proj-1")

/** Directories `tempFile` made, removed when the file's tests are done. */
const tempDirs: Array<string> = []
afterAll(() => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true })
})

const tempFile = (name: string, contents: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-push-config-"))
  tempDirs.push(dir)
  const file = path.join(dir, name)
  fs.writeFileSync(file, contents)
  return file
}

describe("PushConfig", () => {
  it.effect("with nothing set, uses the sandbox for both platforms and a 10 s timeout", () =>
    Effect.gen(function*() {
      const config = yield* read({})
      assert.isTrue(Option.isNone(config.apns))
      assert.isTrue(Option.isNone(config.fcm))
      assert.strictEqual(Duration.toMillis(config.timeout), 10_000)
    }))

  it.effect("reads APNs from inline PEM with Apple's production host by default", () =>
    Effect.gen(function*() {
      const config = yield* read({ ...apns, PUSH_TIMEOUT_MS: "2500" })
      const a = Option.getOrThrow(config.apns)
      assert.strictEqual(a.host, ApnsHosts.production)
      assert.isTrue(Option.isNone(a.sandboxHost))
      assert.strictEqual(a.keyId, "KEY7654321")
      assert.strictEqual(a.teamId, "TEAM123456")
      assert.strictEqual(a.topic, "dev.herald.app")
      assert.strictEqual(Redacted.value(a.key), apnsKey.pem.trim())
      assert.notInclude(String(a.key), "PRIVATE KEY")
      assert.strictEqual(Duration.toMillis(config.timeout), 2500)
    }))

  it.effect("reads the APNs key from a .p8 path, or from one line with \\n escapes", () =>
    Effect.gen(function*() {
      const fromFile = yield* read({ ...apns, APNS_KEY: tempFile("AuthKey_KEY7654321.p8", apnsKey.pem), APNS_SANDBOX_HOST: ApnsHosts.sandbox })
      assert.strictEqual(Redacted.value(Option.getOrThrow(fromFile.apns).key), apnsKey.pem.trim())
      assert.deepStrictEqual(Option.getOrThrow(fromFile.apns).sandboxHost, Option.some(ApnsHosts.sandbox))
      const oneLine = yield* read({ ...apns, APNS_KEY: apnsKey.pem.trim().replace(/\n/g, "\\n") })
      assert.strictEqual(Redacted.value(Option.getOrThrow(oneLine.apns).key), apnsKey.pem.trim())
    }))

  it.effect("refuses a partial APNs configuration, naming what is missing", () =>
    Effect.gen(function*() {
      const message = yield* failure({ APNS_KEY: apnsKey.pem, APNS_KEY_ID: "KEY7654321" })
      assert.include(message, "APNS_TEAM_ID, APNS_TOPIC are not set")
      assert.notInclude(message!, "PRIVATE KEY")
      assert.include(yield* failure({ APNS_HOST: "api.push.apple.com" }), "APNS_KEY, APNS_KEY_ID, APNS_TEAM_ID, APNS_TOPIC are not set")
    }))

  it.effect("refuses an APNs key that is not Apple's EC P-256 key, without printing it", () =>
    Effect.gen(function*() {
      const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs8", format: "pem" }) as string
      assert.include(yield* failure({ ...apns, APNS_KEY: rsa }), "not an EC P-256 key")
      const garbage = yield* failure({ ...apns, APNS_KEY: "c2VjcmV0LWJ1dC1ub3QtYS1rZXk=" })
      assert.include(garbage, "APNS_KEY is neither the key itself nor the path of a readable file")
      assert.notInclude(garbage!, "c2VjcmV0")
    }))

  it.effect("reads FCM from inline JSON or a path, with the project from the account or FCM_PROJECT_ID", () =>
    Effect.gen(function*() {
      const inline = Option.getOrThrow((yield* read({ FCM_SERVICE_ACCOUNT: JSON.stringify(serviceAccount.json) })).fcm)
      assert.strictEqual(inline.projectId, "proj-1")
      assert.strictEqual(Redacted.value(inline.serviceAccount).client_email, serviceAccount.json.client_email)
      assert.strictEqual(Redacted.value(inline.serviceAccount).token_uri, "https://oauth2.googleapis.com/token")
      assert.isTrue(Option.isNone(inline.endpoint))
      const file = Option.getOrThrow((yield* read({
        FCM_SERVICE_ACCOUNT: tempFile("sa.json", JSON.stringify(serviceAccount.json)),
        FCM_PROJECT_ID: "other-project",
        FCM_ENDPOINT: "https://127.0.0.1:9443"
      })).fcm)
      assert.strictEqual(file.projectId, "other-project")
      assert.deepStrictEqual(Option.map(file.endpoint, (u) => u.host), Option.some("127.0.0.1:9443"))
      assert.notInclude(String(file.serviceAccount), "PRIVATE KEY")
    }))

  it.effect("refuses a partial or broken FCM configuration", () =>
    Effect.gen(function*() {
      assert.include(yield* failure({ FCM_PROJECT_ID: "p" }), "FCM_SERVICE_ACCOUNT is not set but FCM_PROJECT_ID is")
      assert.include(yield* failure({ FCM_SERVICE_ACCOUNT: "{not json" }), "FCM_SERVICE_ACCOUNT is not valid JSON")
      const { project_id: _, ...withoutProject } = serviceAccount.json
      assert.include(yield* failure({ FCM_SERVICE_ACCOUNT: JSON.stringify(withoutProject) }), "FCM_PROJECT_ID is not set")
      assert.include(
        yield* failure({ FCM_SERVICE_ACCOUNT: JSON.stringify(serviceAccount.json), FCM_ENDPOINT: "ftp://x" }),
        "FCM_ENDPOINT must be an https URL"
      )
      assert.include(
        yield* failure({ FCM_SERVICE_ACCOUNT: JSON.stringify(serviceAccount.json), FCM_ENDPOINT: "http://fcm-proxy.example.com" }),
        "plain http only on loopback"
      )
      const plain = yield* read({ FCM_SERVICE_ACCOUNT: JSON.stringify(serviceAccount.json), FCM_ENDPOINT: "http://127.0.0.1:8080" })
      assert.deepStrictEqual(Option.flatMap(plain.fcm, (f) => Option.map(f.endpoint, (u) => u.protocol)), Option.some("http:"))
      assert.include(yield* failure({ PUSH_TIMEOUT_MS: "0" }), "PUSH_TIMEOUT_MS must be an integer above 0, not \"0\"")
    }))

  it("documents every variable it reads", () => {
    assert.deepStrictEqual(pushEnvironmentVariables.map((v) => v.name), [
      "APNS_KEY",
      "APNS_KEY_ID",
      "APNS_TEAM_ID",
      "APNS_TOPIC",
      "APNS_HOST",
      "APNS_SANDBOX_HOST",
      "FCM_SERVICE_ACCOUNT",
      "FCM_PROJECT_ID",
      "FCM_ENDPOINT",
      "PUSH_TIMEOUT_MS",
      "HERALD_WEBPUSH_SUBJECT"
    ])
    for (const v of pushEnvironmentVariables) assert.isAbove(v.description.length, 10)
  })
})
