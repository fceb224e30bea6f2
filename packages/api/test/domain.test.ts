/**
 * The domain records' own rules: the mini-app manifest enforces every line of the spec's
 * manifest table, timestamps are RFC 3339 date-times (and say so in JSON Schema), and the
 * identity records survive an encode/decode round trip.
 */
import { assert, describe, it } from "@effect/vitest"
import { ApiToken, Device, MiniAppManifest, Timestamp, TokenStatus } from "@herald/api/domain/index"
import { Exit, Schema } from "effect"

const decodeManifest = Schema.decodeUnknownExit(MiniAppManifest)

const sha = "a".repeat(64)
const file = { path: "index.html", size: 120, sha256: sha, mediaType: "text/html" }
const manifest = {
  schemaVersion: 1,
  appId: "my-todo-2",
  name: "My Todo",
  version: "1.2.3-beta.1+build.5",
  publisher: { id: "usr_01J0000000000000000000000", name: "Ada" },
  format: "web",
  runtime: "web-1",
  entryPoint: "index.html",
  files: [file, { path: "assets/app.v2.min.js", size: 0, sha256: "0123456789abcdef".repeat(4), mediaType: "application/vnd.api+json" }],
  capabilities: ["local-storage"],
  ageRating: 4,
  commerce: "none",
  aliases: ["todo", "tasks"],
  privacyUrl: "https://example.com/privacy",
  supportUrl: "https://example.com/support"
}

const rejects = (input: unknown, why: string) =>
  assert.isTrue(Exit.isFailure(decodeManifest(input)), `expected rejection: ${why}`)

describe("MiniAppManifest", () => {
  it("decodes a valid manifest, with and without the optional fields", () => {
    const full = decodeManifest(manifest)
    assert.isTrue(Exit.isSuccess(full), String(full))
    const { aliases: _a, privacyUrl: _p, supportUrl: _s, ...minimal } = manifest
    const min = decodeManifest({ ...minimal, capabilities: [] })
    assert.isTrue(Exit.isSuccess(min), String(min))
    // The boundaries themselves are allowed.
    const edges = decodeManifest({
      ...manifest,
      files: Array.from({ length: 256 }, (_, i) => ({ ...file, path: `f${i}.js`, size: i === 0 ? 4_194_304 : 0 })),
      aliases: Array.from({ length: 8 }, (_, i) => `a${i}`)
    })
    assert.isTrue(Exit.isSuccess(edges), String(edges))
  })

  it("rejects extra fields at the top level and in publisher", () => {
    rejects({ ...manifest, extra: true }, "top-level extra field")
    rejects({ ...manifest, publisher: { ...manifest.publisher, email: "a@b.c" } }, "publisher extra field")
  })

  it("rejects a missing required field", () => {
    const { commerce: _c, ...noCommerce } = manifest
    rejects(noCommerce, "commerce missing")
  })

  it("enforces the appId rule", () => {
    for (const appId of ["My-App", "my_app", "-app", "app-", "my--app", "", "a".repeat(65)]) rejects({ ...manifest, appId }, `appId ${appId}`)
    assert.isTrue(Exit.isSuccess(decodeManifest({ ...manifest, appId: "a".repeat(64) })))
  })

  it("enforces semantic versions", () => {
    for (const version of ["1.2", "1.2.3.4", "01.2.3", "v1.2.3", "1.2.3-", "1.2.3+", "1.2.3-01", `1.2.3-${"a".repeat(60)}`]) {
      rejects({ ...manifest, version }, `version ${version}`)
    }
    for (const version of ["0.0.0", "10.20.30", "1.0.0-alpha", "1.0.0-0.3.7", "1.0.0+20130313144700", "1.0.0-x-y-z.--"]) {
      assert.isTrue(Exit.isSuccess(decodeManifest({ ...manifest, version })), version)
    }
  })

  it("enforces the relative path rule on entryPoint and file paths", () => {
    for (const path of ["../x", "/abs", "a//b", "a/", "./a", "a/../b", ".hidden", "a b", "a\\b", "x".repeat(241)]) {
      rejects({ ...manifest, entryPoint: path }, `entryPoint ${path}`)
      rejects({ ...manifest, files: [{ ...file, path }] }, `file path ${path}`)
    }
  })

  it("enforces file rules: sha256, size, mediaType and count", () => {
    rejects({ ...manifest, files: [{ ...file, sha256: "A".repeat(64) }] }, "uppercase sha256")
    rejects({ ...manifest, files: [{ ...file, sha256: "a".repeat(63) }] }, "short sha256")
    rejects({ ...manifest, files: [{ ...file, size: 4_194_305 }] }, "size over 4194304")
    rejects({ ...manifest, files: [{ ...file, size: -1 }] }, "negative size")
    rejects({ ...manifest, files: [{ ...file, size: 1.5 }] }, "fractional size")
    rejects({ ...manifest, files: [{ ...file, mediaType: "Text/HTML" }] }, "uppercase media type")
    rejects({ ...manifest, files: [{ ...file, mediaType: "texthtml" }] }, "media type without subtype")
    rejects({ ...manifest, files: [] }, "no files")
    rejects({ ...manifest, files: Array.from({ length: 257 }, (_, i) => ({ ...file, path: `f${i}.js` })) }, "257 files")
  })

  it("enforces capabilities, ageRating, commerce, aliases, schemaVersion and URLs", () => {
    rejects({ ...manifest, capabilities: ["camera"] }, "unknown capability")
    rejects({ ...manifest, capabilities: ["local-storage", "local-storage"] }, "two capabilities")
    rejects({ ...manifest, ageRating: 5 }, "ageRating 5")
    rejects({ ...manifest, commerce: "paid" }, "commerce other than none")
    rejects({ ...manifest, aliases: Array.from({ length: 9 }, (_, i) => `a${i}`) }, "9 aliases")
    rejects({ ...manifest, aliases: [""] }, "empty alias")
    rejects({ ...manifest, schemaVersion: 2 }, "schemaVersion 2")
    rejects({ ...manifest, privacyUrl: "not a uri" }, "privacyUrl not a URI")
    rejects({ ...manifest, supportUrl: `https://example.com/${"a".repeat(2048)}` }, "supportUrl over 2048")
    rejects({ ...manifest, name: "" }, "empty name")
    rejects({ ...manifest, publisher: { id: "", name: "Ada" } }, "empty publisher id")
  })

  it("shows additionalProperties: false in JSON Schema", () => {
    const doc = Schema.toJsonSchemaDocument(MiniAppManifest, { onExcessProperty: "error" }) as unknown as {
      definitions: Record<string, { additionalProperties?: unknown }>
    }
    assert.strictEqual(doc.definitions.MiniAppManifestEncoded?.additionalProperties, false)
    assert.strictEqual(doc.definitions.MiniAppPublisherEncoded?.additionalProperties, false)
  })
})

describe("Timestamp", () => {
  const decode = Schema.decodeUnknownExit(Timestamp)

  it("accepts RFC 3339 date-times", () => {
    for (const s of ["2026-01-31T12:00:00Z", "2026-01-31T12:00:00.123Z", "2024-02-29T23:59:59+05:30", "2026-07-01T00:00:00.123456-08:00"]) {
      assert.isTrue(Exit.isSuccess(decode(s)), s)
    }
  })

  it("rejects other strings", () => {
    for (const s of ["", "2026-01-31", "2026-01-31 12:00:00Z", "2026-01-31T12:00Z", "2026-01-31T12:00:00", "2026-02-30T00:00:00Z", "2025-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-01-01T24:00:00Z", "yesterday", 1767225600000]) {
      assert.isTrue(Exit.isFailure(decode(s)), String(s))
    }
  })

  it("holds instants of years 0001–9999 in UTC only, whatever the offset says", () => {
    for (const s of ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "9999-12-31T23:30:00+01:00"]) {
      assert.isTrue(Exit.isSuccess(decode(s)), s)
    }
    for (const s of ["9999-12-31T23:30:00-01:00", "0001-01-01T00:30:00+01:00", "0000-12-31T00:00:00Z"]) {
      assert.isTrue(Exit.isFailure(decode(s)), s)
    }
  })

  it("is `format: date-time` in JSON Schema", () => {
    const doc = Schema.toJsonSchemaDocument(Timestamp) as unknown as { definitions: Record<string, { type: string; format?: string }> }
    assert.deepInclude(doc.definitions.Timestamp, { type: "string", format: "date-time" })
  })
})

describe("identity records round-trip", () => {
  const roundTrip = <S extends Schema.Codec<unknown, unknown>>(schema: S, encoded: unknown) => {
    const decoded = Schema.decodeUnknownSync(schema)(encoded)
    assert.deepStrictEqual(Schema.encodeUnknownSync(schema)(decoded), encoded)
  }

  it("Device", () => {
    roundTrip(Device, {
      id: "dev_01",
      platform: "ios",
      deviceName: null,
      active: true,
      liveActivitiesCapable: true,
      liveActivityTokenEnvironment: "sandbox",
      liveActivityTokenUpdatedAt: "2026-01-31T12:00:00.000Z",
      interactiveLiveActivitiesCapable: false,
      createdAt: "2026-01-31T12:00:00.000Z",
      lastSeenAt: "2026-02-01T08:30:00.000Z"
    })
  })

  it("ApiToken, with and without the optional kind and oauthClient", () => {
    const token = {
      id: "tok_01",
      name: "ci",
      prefix: "hld_abc",
      scopes: ["notifications:send", "devices:read"],
      expiresAt: null,
      lastUsedAt: "2026-01-31T12:00:00.000Z",
      revokedAt: null,
      createdAt: "2026-01-30T12:00:00.000Z"
    }
    roundTrip(ApiToken, token)
    roundTrip(ApiToken, { ...token, kind: "oauth", oauthClient: { clientId: "c1", name: "Remote tool" } })
    roundTrip(ApiToken, { ...token, kind: "token", oauthClient: null })
    assert.isTrue(Exit.isFailure(Schema.decodeUnknownExit(ApiToken)({ ...token, scopes: ["root"] })))
  })

  it("TokenStatus", () => {
    roundTrip(TokenStatus, {
      authenticated: true,
      userId: "usr_01",
      token: {
        id: "tok_01",
        name: "ci",
        prefix: "hld_abc",
        scopes: ["tokens:manage"],
        createdAt: "2026-01-30T12:00:00.000Z",
        lastUsedAt: null,
        expiresAt: "2026-03-01T00:00:00.000Z"
      }
    })
  })
})
