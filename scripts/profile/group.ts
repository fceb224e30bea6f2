/**
 * Groups V8 CPU profiles (`node --cpu-prof`; the bench's `BENCH_PROFILE=<dir>`)
 * by layer: self time (where the CPU was) and inclusive time (what was on the
 * stack), as shares of the busy samples, idle left out. Several profiles (of
 * paired runs) are added together.
 *
 *   node scripts/profile/group.ts <file.cpuprofile | dir>... [--window <s>] [--per-request-us <µs>]
 *     [--files <n>] [--functions <n>] [--callers <function name>]
 *
 * `--window <s>`: only the last <s> busy seconds of each profile (with
 * `--busiest`: the <s> consecutive seconds with the most samples; the bench
 * loads the server last), not start-up or warm-up. `--per-request-us`: the
 * CPU per request the bench printed, to turn shares into µs per request.
 * `--files <n>` / `--functions <n>`: the top <n> files / functions by self
 * time; `--callers <name>`: the call paths (5 frames up) to functions of that
 * name. A directory stands for every profile in it.
 *
 * Samples are counted, not weighted by their time gaps: on a loaded machine a
 * gap also holds time the process was not running, which would inflate
 * whatever happened to be sampled before it.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import path from "node:path"

interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
}
interface ProfileNode {
  readonly id: number
  readonly callFrame: CallFrame
  readonly children?: ReadonlyArray<number>
}
interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

/** The layer a frame belongs to, by its file (URL) and, for native frames, its name. */
const layerOf = ({ functionName, url }: CallFrame): string => {
  if (url === "") {
    if (functionName === "(garbage collector)") return "GC"
    if (functionName === "(idle)") return "idle"
    if (functionName === "(program)") return "V8/native (program)"
    if (/^(parse|stringify)$/.test(functionName)) return "JSON"
    if (/^(writev|writeBuffer|writeUtf8String|writeLatin1String|onStreamRead|shutdown|close)$/.test(functionName)) {
      return "socket I/O (native)"
    }
    return "V8/native (builtins)"
  }
  if (url.startsWith("node:crypto") || url.startsWith("node:internal/crypto")) return "crypto"
  if (url.startsWith("node:")) {
    if (/node:(_http|http|internal\/http|net|internal\/stream|stream|internal\/streams)/.test(url)) return "node http/net/streams"
    return "node internals (other)"
  }
  const effect = url.match(/node_modules\/effect\/(?:dist|src)\/(.*)$/)
  if (effect !== null) {
    const file = effect[1]!
    if (/^(http|http-api)\//.test(file)) return "effect http / HttpApi"
    if (/^(Schema|SchemaAST|SchemaParser|SchemaGetter|SchemaIssue|SchemaTransformation|internal\/schema|schema\/)/.test(file)) {
      return "schema decode/encode"
    }
    if (/^(sql\/|internal\/sql)/.test(file)) return "effect sql"
    if (/^(Metric|internal\/metric)/.test(file)) return "effect metrics"
    if (/^(Tracer|internal\/tracer|observability\/)/.test(file)) return "effect tracer"
    if (/^(cluster|workflow|rpc)\//.test(file)) return "effect cluster/rpc"
    if (/^(Context|internal\/context)/.test(file)) return "effect context"
    return "effect runtime/fiber"
  }
  if (/node_modules\/(@effect\/sql-pg|pg|pg-protocol|pg-pool|pg-types|postgres-)/.test(url)) return "SQL driver"
  if (url.includes("/packages/server/src/http/")) return "herald edge (http/)"
  if (url.includes("/packages/server/src/")) return "herald server (other)"
  if (url.includes("/packages/api/src/")) return "herald api contract"
  if (url.includes("node_modules/")) return "other packages"
  return "other"
}

const shortUrl = (url: string) => url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*?\/(packages|apps)\//, "$1/")
const frameName = (f: CallFrame) => `${f.functionName || "(anonymous)"} ${f.url === "" ? "(native)" : shortUrl(f.url)}:${f.lineNumber + 1}`

const args = process.argv.slice(2)
const valued = new Set(["--window", "--per-request-us", "--files", "--functions", "--callers"])
const inputs: Array<string> = []
const options = new Map<string, string>()
const flags = new Set<string>()
for (let i = 0; i < args.length; i++) {
  const arg = args[i]!
  if (valued.has(arg)) options.set(arg, args[++i] ?? "")
  else if (arg === "--busiest") flags.add(arg)
  else inputs.push(arg)
}
if (inputs.length === 0) {
  console.error("usage: node scripts/profile/group.ts <file.cpuprofile | dir>... [--window <s> [--busiest]] [--per-request-us <µs>] [--files <n>] [--functions <n>] [--callers <name>]")
  process.exit(2)
}
const number = (name: string) => options.has(name) ? Number(options.get(name)) : undefined
const window = number("--window")
const callersOf = options.get("--callers")

const files = inputs.flatMap((input) =>
  statSync(input).isDirectory()
    ? readdirSync(input).filter((f) => f.endsWith(".cpuprofile")).map((f) => path.join(input, f))
    : [input]
)

const self = new Map<string, number>()
const inclusive = new Map<string, number>()
const byFile = new Map<string, number>()
const byFunction = new Map<string, number>()
const callers = new Map<string, number>()
const add = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1)
let total = 0
let seconds = 0

for (const file of files) {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const frame = (id: number) => byId.get(id)!.callFrame
  const layers = new Map<number, string>()
  const layer = (id: number) => {
    let l = layers.get(id)
    if (l === undefined) layers.set(id, l = layerOf(frame(id)))
    return l
  }

  // Each sample's time from the start of the profile, in µs.
  const times: Array<number> = []
  let t = 0
  for (const d of profile.timeDeltas) times.push(t += d)
  const samples = profile.samples
  let start = 0
  let end = Number.POSITIVE_INFINITY
  if (window !== undefined) {
    const perSecond = new Map<string, number>()
    samples.forEach((id, i) => {
      if (layer(id) !== "idle") add(perSecond, String(Math.floor(times[i]! / 1e6)))
    })
    const counts = [...perSecond].map(([s, n]) => [Number(s), n] as const)
    const busiest = Math.max(...counts.map(([, n]) => n))
    // The last second with a tenth of the busiest second's samples: the profile may end with idle seconds.
    const lastBusy = Math.max(...counts.filter(([, n]) => n >= busiest / 10).map(([s]) => s))
    end = (lastBusy + 1) * 1e6
    if (flags.has("--busiest")) {
      // The <s> consecutive seconds with the most samples: the load, wherever it lies (a bench part
      // followed by other servers' loads leaves this one idle but not silent at its end).
      const at = new Map(counts)
      let best = -1
      for (const [second] of counts) {
        let sum = 0
        for (let k = 0; k < window; k++) sum += at.get(second + k) ?? 0
        if (sum > best) [best, end] = [sum, (second + window) * 1e6]
      }
    }
    start = end - window * 1e6
  }
  seconds += window ?? t / 1e6

  samples.forEach((id, i) => {
    const time = times[i]!
    if (time < start || time >= end || layer(id) === "idle") return
    total++
    add(self, layer(id))
    const f = frame(id)
    add(byFile, f.url === "" ? f.functionName : shortUrl(f.url))
    add(byFunction, frameName(f))
    if (callersOf !== undefined && f.functionName === callersOf) {
      const up: Array<string> = []
      for (let n = parent.get(id), k = 0; n !== undefined && k < 5; n = parent.get(n), k++) up.push(frameName(frame(n)))
      add(callers, up.join(" < "))
    }
    const seen = new Set<string>()
    for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) seen.add(layer(n))
    for (const s of seen) add(inclusive, s)
  })
}

const perRequest = number("--per-request-us")
const pct = (v: number) => `${(100 * v / total).toFixed(1)} %`
const top = (map: Map<string, number>, n: number) => [...map].sort((a, b) => b[1] - a[1]).slice(0, n)
console.log(`${files.length} profile(s), ${total} busy samples in ${seconds.toFixed(0)} s${window !== undefined ? ` (last ${window} busy s of each)` : ""}`)
console.log(`\n| layer | self | inclusive |${perRequest !== undefined ? " self µs/request |" : ""}`)
console.log(`|---|---|---|${perRequest !== undefined ? "---|" : ""}`)
for (const [name, v] of top(self, self.size)) {
  const us = perRequest !== undefined ? ` ${(perRequest * v / total).toFixed(0)} |` : ""
  console.log(`| ${name} | ${pct(v)} | ${pct(inclusive.get(name) ?? 0)} |${us}`)
}
const topFiles = number("--files")
if (topFiles !== undefined) {
  console.log(`\n| file (self) | share |\n|---|---|`)
  for (const [name, v] of top(byFile, topFiles)) console.log(`| ${name} | ${pct(v)} |`)
}
const topFunctions = number("--functions")
if (topFunctions !== undefined) {
  console.log(`\n| function (self) | share |\n|---|---|`)
  for (const [name, v] of top(byFunction, topFunctions)) console.log(`| ${name} | ${pct(v)} |`)
}
if (callersOf !== undefined) {
  console.log(`\n| callers of ${callersOf} | share |\n|---|---|`)
  for (const [name, v] of top(callers, 15)) console.log(`| ${name} | ${pct(v)} |`)
}
