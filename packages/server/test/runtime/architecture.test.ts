/**
 * The conventions of docs/architecture.md ("Conventions"), walked over
 * packages/server/src: imports (capability folders do not reach into the
 * runtime, repos import no service, handlers no repo, MetricsAtZero no
 * capability), file names and sizes, service ids, transactions and "who is
 * calling"; and the layers: each capability's layer requires the platform
 * alone (checked by the type checker below) and builds alone on a database
 * with only the platform.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { TestSqlLayer } from "../../../../test/support/database.ts"
import { ActivitiesLayer } from "../../src/activities/layer.ts"
import { AppsLayer } from "../../src/apps/layer.ts"
import { SignInLayer } from "../../src/auth/layer.ts"
import { BillingLayer } from "../../src/billing/layer.ts"
import { ConnectorsLayer } from "../../src/connectors/layer.ts"
import { EmailLayer } from "../../src/email/layer.ts"
import { IdempotencyLayer } from "../../src/idempotency/layer.ts"
import { InboxLayer } from "../../src/inbox/layer.ts"
import { PromptsLayer } from "../../src/interactions/layer.ts"
import { McpLayer } from "../../src/mcp/layer.ts"
import { MiniAppsLayer } from "../../src/miniApps/layer.ts"
import { NotificationsLayer } from "../../src/notifications/layer.ts"
import { OAuthLayer } from "../../src/oauth/layer.ts"
import { OncallLayer } from "../../src/oncall/layer.ts"
import { QuietLayer } from "../../src/quiet/layer.ts"
import { ServicesLayer } from "../../src/services/layer.ts"
import { TeamsLayer } from "../../src/teams/layer.ts"
import { WatchLayer } from "../../src/watch/layer.ts"
import { WebhooksLayer } from "../../src/webhooks/layer.ts"
import { PlatformLayer } from "../../src/runtime/Platform.ts"
import type { PlatformDatabase, PlatformServices } from "../../src/runtime/Platform.ts"
import type { CapabilitiesLayer } from "../../src/runtime/Server.ts"

const src = path.resolve(import.meta.dirname, "../../src")

/** The folders that are not capabilities: the platform's and the runtime's machinery. */
const infrastructure = new Set(["runtime", "db", "config", "lib", "http", "observability", "cluster", "console", "push", "identity"])

/** Every capability's one layer, by folder. */
const capabilities = {
  activities: ActivitiesLayer,
  apps: AppsLayer,
  auth: SignInLayer,
  billing: BillingLayer,
  connectors: ConnectorsLayer,
  email: EmailLayer,
  idempotency: IdempotencyLayer,
  inbox: InboxLayer,
  interactions: PromptsLayer,
  mcp: McpLayer,
  miniApps: MiniAppsLayer,
  notifications: NotificationsLayer,
  oauth: OAuthLayer,
  oncall: OncallLayer,
  quiet: QuietLayer,
  services: ServicesLayer,
  teams: TeamsLayer,
  watch: WatchLayer,
  webhooks: WebhooksLayer
} as const

// ── layer requirements, checked by the type checker ─────────────────────────

/** `true` when `L` requires nothing beyond `Allowed`; `never` (so the assignment below fails typecheck) otherwise. */
type Within<L extends Layer.Any, Allowed> = [Layer.Services<L>] extends [Allowed] ? true : never

const onThePlatform: { readonly [K in keyof typeof capabilities]: Within<(typeof capabilities)[K], PlatformServices> } = {
  activities: true,
  apps: true,
  auth: true,
  billing: true,
  connectors: true,
  email: true,
  idempotency: true,
  inbox: true,
  interactions: true,
  mcp: true,
  miniApps: true,
  notifications: true,
  oauth: true,
  oncall: true,
  quiet: true,
  services: true,
  teams: true,
  watch: true,
  webhooks: true
}
// The platform and the capabilities on it need the database alone.
const platformNeedsTheDatabase: Within<typeof PlatformLayer, PlatformDatabase> = true
const capabilitiesNeedTheDatabase: Within<typeof CapabilitiesLayer, PlatformDatabase> = true

// ── the source walk ─────────────────────────────────────────────────────────

const sourceFiles = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith(".ts") ? [full] : []
  })

const files = sourceFiles(src)
const rel = (file: string) => path.relative(src, file)
const folderOf = (file: string) => rel(file).split(path.sep)[0]!
const read = (file: string) => fs.readFileSync(file, "utf8")
/** The text without comments, for rules on code. */
const code = (file: string) => read(file).replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "")

/** The repository modules `file` imports with a value import (type-only imports carry no dependency at run time). */
const valueImports = (file: string): Array<string> =>
  [...read(file).matchAll(/^import\s+(?!type\s)[^"']*?from\s+["'](\.[^"']+)["']/gm)].map((m) => path.resolve(path.dirname(file), m[1]!))
const allImports = (file: string): Array<string> =>
  [...read(file).matchAll(/^(?:import|export)\s[^"']*?from\s+["'](\.[^"']+)["']/gm)].map((m) => path.resolve(path.dirname(file), m[1]!))

const declaresService = (file: string) => /extends Context\.Service</.test(read(file))
const isRepo = (file: string) => /class \w+Repo extends Context\.Service</.test(read(file))
const isHandler = (file: string) => /(^|[a-z])(http|Http)\.ts$/.test(path.basename(file))

describe("conventions (docs/architecture.md)", () => {
  it("each capability's layer requires the platform alone (held by the type checker above)", () => {
    assert.isTrue(Object.values(onThePlatform).every((held) => held))
    assert.isTrue(platformNeedsTheDatabase && capabilitiesNeedTheDatabase)
  })

  it("every capability has one layer.ts, and each is listed here", () => {
    const folders = fs.readdirSync(src, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && !infrastructure.has(entry.name)).map((entry) => entry.name).sort()
    assert.deepStrictEqual(folders, Object.keys(capabilities).sort())
    for (const folder of folders) {
      const exported = [...read(path.join(src, folder, "layer.ts")).matchAll(/^export const (\w+Layer)\b/gm)].map((m) => m[1])
      assert.strictEqual(exported.length, 1, `${folder}/layer.ts exports ${exported.join(", ")}`)
    }
  })

  it("each capability layer appears once in the graph: in CapabilitiesLayer or carried by one other layer", () => {
    const uses = (name: string) =>
      files.flatMap((file) => [...code(file).replace(/^import[^;]*?from\s+"[^"]+"/gm, "").matchAll(new RegExp(`\\b${name}\\b`, "g"))].map(() => rel(file)))
    for (const folder of Object.keys(capabilities)) {
      const name = /^export const (\w+Layer)\b/m.exec(read(path.join(src, folder, "layer.ts")))![1]!
      const elsewhere = uses(name).filter((file) => file !== path.join(folder, "layer.ts"))
      assert.strictEqual(elsewhere.length, 1, `${name} is used in ${elsewhere.join(", ") || "no layer"}`)
    }
  })

  it("nothing outside runtime/ imports it", () => {
    const offenders = files.filter((file) => folderOf(file) !== "runtime")
      .filter((file) => allImports(file).some((target) => rel(target).startsWith(`runtime${path.sep}`)))
    assert.deepStrictEqual(offenders.map(rel), [])
  })

  it("observability/MetricsAtZero.ts imports no capability", () => {
    const file = path.join(src, "observability/MetricsAtZero.ts")
    assert.deepStrictEqual(allImports(file).map(rel).filter((target) => !target.startsWith("..")), [])
  })

  it("a repo imports no service: only db/, lib/, config/, other repos and modules that declare none", () => {
    const offenders = files.filter(isRepo).flatMap((file) =>
      valueImports(file)
        .filter((target) => !["db", "lib", "config"].includes(folderOf(target)))
        .filter((target) => fs.existsSync(target) && declaresService(target) && !isRepo(target))
        .map((target) => `${rel(file)} → ${rel(target)}`))
    assert.deepStrictEqual(offenders, [])
  })

  it("handlers (http.ts, appHttp.ts, …Http.ts) import no repo", () => {
    const offenders = files.filter(isHandler).flatMap((file) =>
      valueImports(file).filter((target) => fs.existsSync(target) && isRepo(target)).map((target) => `${rel(file)} → ${rel(target)}`))
    assert.deepStrictEqual(offenders, [])
  })

  it("a repo's file is named for it: <Thing>Repo.ts", () => {
    const offenders = files.filter(isRepo).filter((file) => !/^[A-Z]\w*Repo\.ts$/.test(path.basename(file)))
    assert.deepStrictEqual(offenders.map(rel), [])
  })

  it("every file is under 400 lines", () => {
    const offenders = files.filter((file) => read(file).split("\n").length >= 400)
    assert.deepStrictEqual(offenders.map(rel), [])
  })

  it("service ids are herald/<ClassName>", () => {
    const offenders = files.flatMap((file) =>
      [...read(file).matchAll(/class (\w+) extends Context\.Service<[\s\S]*?>\(\)\(\s*"([^"]+)"\s*\)/g)]
        .filter((m) => m[2] !== `herald/${m[1]}`)
        .map((m) => `${rel(file)}: ${m[1]} is "${m[2]}"`))
    assert.deepStrictEqual(offenders, [])
  })

  it("transactions: sql.withTransaction only inside repos (and db/); a service takes its repo's inTransaction", () => {
    const outside = files
      .filter((file) => folderOf(file) !== "db" && !isRepo(file))
      .filter((file) => /\bsql\.withTransaction\(/.test(code(file)))
    const named = files.filter(isRepo).filter((file) => /readonly withTransaction\b/.test(code(file)))
    assert.deepStrictEqual({ outside: outside.map(rel), named: named.map(rel) }, { outside: [], named: [] })
  })

  it("who is calling: only the middleware, the handlers and the audit actors read CurrentAgent / CurrentPerson", () => {
    const readers = new Set(["auth/AgentAuthLive.ts", "auth/PersonAuthLive.ts", "teams/AuditTrail.ts", "mcp/McpAuth.ts", "mcp/McpMeter.ts", "mcp/Tools.ts", "mcp/ToolHandlers.ts"])
    const offenders = files
      .filter((file) => !isHandler(file) && !readers.has(rel(file)))
      .filter((file) => /\bCurrent(Agent|Person)\b/.test(code(file)))
    assert.deepStrictEqual(offenders.map(rel), [])
  })
})

// ── each capability alone on the platform ───────────────────────────────────

// No DATABASE_URL: the actor runtime is a single runner, as in every in-process test (cluster/Cluster.ts).
const Environment = ConfigProvider.layer(ConfigProvider.fromUnknown({}))

layer(TestSqlLayer, { excludeTestServices: true, timeout: "120 seconds" })("each capability builds alone on the platform", (it) => {
  const each: ReadonlyArray<readonly [string, Layer.Layer<never, unknown, PlatformServices>]> = Object.entries(capabilities)
  for (const [folder, capability] of each) {
    it.effect(folder, () =>
      Effect.gen(function*() {
        const built = yield* Layer.build(capability.pipe(Layer.provide(PlatformLayer), Layer.provide(Environment)))
        assert.isAbove(built.mapUnsafe.size, 0)
      }).pipe(Effect.scoped))
  }
})
