/**
 * docs/configuration.md is what the config declarations render, and the
 * declarations name every variable the config modules read.
 */
import { assert, describe, it } from "@effect/vitest"
import { Config, ConfigProvider, Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { renderConfigurationReference, sections } from "../../src/config/Reference.ts"

const committed = path.resolve(import.meta.dirname, "../../../../docs/configuration.md")
const configDir = path.resolve(import.meta.dirname, "../../src/config")

/** Every `Config` exported by a module of config/, a module added later included. */
const exportedConfigs = Effect.promise(async () => {
  const modules = await Promise.all(
    fs.readdirSync(configDir).filter((f) => f.endsWith(".ts")).map((f) => import(path.join(configDir, f)) as Promise<Record<string, unknown>>)
  )
  return modules.flatMap((m) => Object.values(m).filter(Config.isConfig))
})

describe("configuration reference", () => {
  it("docs/configuration.md is what the declarations render (run `npm run docs:config` after a change)", () => {
    assert.strictEqual(fs.readFileSync(committed, "utf8"), renderConfigurationReference())
  })

  it.effect("declares every variable the server reads, once", () =>
    Effect.gen(function*() {
      // A provider with nothing set that records each key asked for: every config falls back to its defaults.
      const read = new Set<string>()
      const recording = ConfigProvider.make((keys) => Effect.sync(() => (read.add(keys.join(".")), undefined)))
      const configs = yield* exportedConfigs
      assert.isAtLeast(configs.length, 6)
      for (const config of configs) yield* config.parse(recording)
      const declared = sections.flatMap((s) => s.variables.map((v) => v.name))
      assert.deepStrictEqual([...declared].sort(), [...read].sort())
      assert.strictEqual(new Set(declared).size, declared.length)
    }))

  it("states a type, a default and a meaning for each variable", () => {
    for (const v of sections.flatMap((s) => s.variables)) {
      assert.isAbove(v.type.length, 3, v.name)
      assert.isAbove(v.default.length, 0, v.name)
      assert.isAbove(v.description.length, 10, v.name)
    }
  })

  it("refuses 0 and negative counts unless 0 has a stated meaning", () => {
    // A numeric range that admits 0 must say what 0 does (e.g. that it turns a limit off): `(\`0\` …)`.
    const admitsZero = (type: string) => {
      const bounds = /^(?:integer|number)(?: (.*))?$/.exec(type.replace(/ \(`0`.*\)$/, ""))
      if (bounds === null) return false
      const [, range = ""] = bounds
      const between = /^(-?[\d.]+)–(-?[\d.]+)$/.exec(range)
      if (between !== null) return Number(between[1]) <= 0 && Number(between[2]) >= 0
      const atLeast = /(?:^≥|\bat least) (-?[\d.]+)\b/.exec(range)
      if (atLeast !== null) return Number(atLeast[1]) <= 0
      const atMost = /^≤ (-?[\d.]+)$/.exec(range)
      if (atMost !== null) return Number(atMost[1]) >= 0
      return range !== "above 0"
    }
    assert.isTrue(admitsZero("integer ≥ -5") && admitsZero("number") && !admitsZero("integer 1–1440") &&
      !admitsZero("integer (milliseconds, at least 1)"), "the rule reads the ranges")
    const silent = sections.flatMap((s) => s.variables).filter((v) => admitsZero(v.type) && !v.type.includes("(`0`"))
    assert.deepStrictEqual(silent.map((v) => `${v.name}: ${v.type}`), [])
  })
})
