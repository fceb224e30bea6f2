/**
 * Builds `dist/`: the client and a copy of `@herald/api` compiled to JavaScript with declarations, and a
 * `package.json` whose only dependency is `effect`, so `npm pack packages/client/dist` is installable
 * anywhere. Plain JavaScript so it runs on any Node from `npm install`'s `prepare`. Inside the repository
 * the workspace keeps resolving the TypeScript sources (package.json `exports`).
 */
import { execFileSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const dist = join(root, "dist")
const tsc = join(root, "..", "..", "node_modules", ".bin", "tsc")

// An install without devDependencies (`--omit=dev`) has no compiler: the server needs no dist/, so say so and go on.
if (!existsSync(tsc)) {
  console.warn("@herald/client: TypeScript is not installed (devDependencies omitted?); dist/ not built")
  process.exit(0)
}
rmSync(dist, { recursive: true, force: true })
// Types are checked by the repository's `npm run typecheck`; here only emit (a third of the time).
execFileSync(tsc, ["-p", join(root, "tsconfig.build.json"), "--noCheck"], { stdio: "inherit" })

const files = (dir) => readdirSync(dir).flatMap((name) => {
  const path = join(dir, name)
  return statSync(path).isDirectory() ? files(path) : [path]
})

const apiIndex = join(dist, "api", "src", "index.js")
for (const file of files(dist)) {
  const source = readFileSync(file, "utf8")
  // The copy of the contract replaces the workspace package; declarations name `.js` like the code does.
  let toApi = relative(dirname(file), apiIndex).replaceAll("\\", "/")
  if (!toApi.startsWith(".")) toApi = `./${toApi}`
  const out = source
    .replace(/(["'])@herald\/api\1/g, `"${toApi}"`)
    .replace(/((?:from|import)\s*\(?\s*["'])(\.{1,2}\/[^"']*?)\.ts(["'])/g, "$1$2.js$3")
  if (out !== source) writeFileSync(file, out)
}

const own = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
const api = JSON.parse(readFileSync(join(root, "..", "api", "package.json"), "utf8"))
const entry = "./client/src/index"
writeFileSync(join(dist, "package.json"), JSON.stringify({
  name: own.name,
  version: own.version,
  description: "The typed client of Herald's Agent API and Person API (Effect and Promise faces).",
  type: "module",
  sideEffects: false,
  engines: { node: ">=20" },
  exports: { ".": { types: `${entry}.d.ts`, default: `${entry}.js` }, "./package.json": "./package.json" },
  dependencies: { effect: api.dependencies.effect }
}, null, 2) + "\n")
writeFileSync(join(dist, "README.md"), readFileSync(join(root, "README.md"), "utf8"))
