/**
 * The console's files (packages/console), read once when the server starts
 * and kept in memory with their type, ETag and a gzip copy: the console has
 * no build step, so what is on disk is what is served. Where each file is
 * served:
 *
 * - `public/index.html`: the shell, at every console page (ConsoleRoutes.ts);
 * - `public/sw.js` at `/sw.js` (a service worker's scope is at most its own
 *   directory: `/`), `public/manifest.webmanifest` at `/manifest.webmanifest`;
 * - every other file of `public/` under `/console/…`;
 * - Preact, its hooks and htm from the console's installed packages, under
 *   `/console/vendor/<name>-<version>.js`. The version is in the path, so
 *   they are cached for good; the hooks' one bare import (`"preact"`, which
 *   a browser cannot resolve without an import map, and an import map would
 *   be an inline script) is rewritten to Preact's served path, so both share
 *   one Preact instance.
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { gzipSync } from "node:zlib"

export interface ConsoleFile {
  readonly body: Uint8Array
  /** The body gzipped, when that is smaller. */
  readonly gzip: Uint8Array | undefined
  readonly contentType: string
  readonly etag: string
  /** Vendor files carry their version in the path: cached for good. Everything else is revalidated. */
  readonly immutable: boolean
}

const types: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".webmanifest": "application/manifest+json",
  ".json": "application/json",
  ".png": "image/png",
  ".svg": "image/svg+xml",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8"
}

/** The console's files by the path they are served at, and the shell page. */
export interface ConsoleFiles {
  readonly shell: ConsoleFile
  readonly files: ReadonlyMap<string, ConsoleFile>
  /** The vendor modules' served paths, by package (`preact`, `preact/hooks`, `htm`). */
  readonly vendor: Readonly<Record<string, string>>
}

const compressible = (type: string) => !type.startsWith("image/png")

const fileOf = (body: Uint8Array, contentType: string, immutable: boolean): ConsoleFile => {
  const zipped = compressible(contentType) ? gzipSync(body, { level: 9 }) : undefined
  return {
    body,
    gzip: zipped !== undefined && zipped.byteLength < body.byteLength ? zipped : undefined,
    contentType,
    etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`,
    immutable
  }
}

/** Every file under `dir`, as paths relative to it with `/` separators. */
const walk = (dir: string, prefix = ""): ReadonlyArray<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? walk(path.join(dir, entry.name), `${prefix}${entry.name}/`)
      : entry.isFile() && !entry.name.startsWith(".")
      ? [`${prefix}${entry.name}`]
      : []
  )

const require = createRequire(import.meta.url)

/** The directory of the console package (`@herald/console`, a workspace dependency of the server). */
export const consoleDir = () => path.dirname(require.resolve("@herald/console/package.json"))

/** Where the served path of a file of `public/` is. */
const servedPath = (relative: string) =>
  relative === "sw.js" || relative === "manifest.webmanifest" ? `/${relative}` : `/console/${relative}`

/** Reads the console from disk. Throws when the package or a vendor module is missing (an install problem). */
export const loadConsoleFiles = (): ConsoleFiles => {
  const root = consoleDir()
  const publicDir = path.join(root, "public")
  const files = new Map<string, ConsoleFile>()
  let shell: ConsoleFile | undefined
  for (const relative of walk(publicDir)) {
    const body = fs.readFileSync(path.join(publicDir, relative))
    const type = types[path.extname(relative)] ?? "application/octet-stream"
    if (relative === "index.html") shell = fileOf(body, type, false)
    else files.set(servedPath(relative), fileOf(body, type, false))
  }
  if (shell === undefined) throw new Error(`the console's shell page is missing: ${path.join(publicDir, "index.html")}`)

  // Resolved from the console package, which depends on them.
  const fromConsole = createRequire(path.join(root, "package.json"))
  // From its entry up to its package.json (htm does not export `./package.json`).
  const packageOf = (name: string) => {
    let dir = path.dirname(fromConsole.resolve(name))
    for (;;) {
      const manifest = path.join(dir, "package.json")
      if (fs.existsSync(manifest)) {
        const { name: found, version } = JSON.parse(fs.readFileSync(manifest, "utf8")) as { name?: string; version: string }
        if (found === name) return { dir, version }
      }
      if (path.dirname(dir) === dir) throw new Error(`the console's dependency ${name} is not installed`)
      dir = path.dirname(dir)
    }
  }
  const preact = packageOf("preact")
  const htm = packageOf("htm")
  const vendor = {
    "preact": `/console/vendor/preact-${preact.version}.js`,
    "preact/hooks": `/console/vendor/preact-hooks-${preact.version}.js`,
    "htm": `/console/vendor/htm-${htm.version}.js`
  }
  const js = types[".js"]!
  const read = (file: string) => fs.readFileSync(file, "utf8")
  files.set(vendor.preact, fileOf(Buffer.from(read(path.join(preact.dir, "dist/preact.module.js"))), js, true))
  const hooks = read(path.join(preact.dir, "hooks/dist/hooks.module.js"))
  const rewritten = hooks.replace(/from\s*"preact"/g, `from"${vendor.preact}"`)
  if (rewritten === hooks) throw new Error("preact/hooks no longer imports \"preact\": the console's vendor rewrite needs a look")
  files.set(vendor["preact/hooks"], fileOf(Buffer.from(rewritten), js, true))
  files.set(vendor.htm, fileOf(Buffer.from(read(path.join(htm.dir, "dist/htm.module.js"))), js, true))
  return { shell, files, vendor }
}
