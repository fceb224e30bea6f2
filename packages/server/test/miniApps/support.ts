/**
 * Archives for mini-app tests: a valid manifest for a publisher, files with
 * their real size and digest, and raw publishing (the body is sent exactly as
 * given, so tests control the bytes).
 */
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { rawFetch, TestServer } from "../../../../test/support/server.ts"

export interface ArchiveFile {
  readonly path: string
  readonly bytes: Buffer
  readonly mediaType?: string
}

export const file = (path: string, content: string | Buffer, mediaType = "text/html"): ArchiveFile => ({
  path,
  bytes: typeof content === "string" ? Buffer.from(content, "utf8") : content,
  mediaType
})

export const entryOf = (f: ArchiveFile) => ({
  path: f.path,
  size: f.bytes.byteLength,
  sha256: createHash("sha256").update(f.bytes).digest("hex"),
  mediaType: f.mediaType ?? "text/html"
})

let seq = 0

/** A valid manifest (as a plain object tests may change) for `files`; the first file is the entry point. */
export const manifestFor = (publisherId: string, files: ReadonlyArray<ArchiveFile>): Record<string, any> => ({
  schemaVersion: 1,
  appId: "demo-app",
  name: "Demo",
  version: `1.0.${++seq}`,
  publisher: { id: publisherId, name: "Publisher" },
  format: "web",
  runtime: "web-1",
  entryPoint: files[0]!.path,
  files: files.map(entryOf),
  capabilities: [],
  ageRating: 4,
  commerce: "none"
})

/** An archive object: `{manifest, files}` with each file's base64. */
export const archiveFor = (publisherId: string, files: ReadonlyArray<ArchiveFile> = [file("index.html", `<h1>${++seq}</h1>`)]) => ({
  manifest: manifestFor(publisherId, files),
  files: files.map((f) => ({ path: f.path, contentBase64: f.bytes.toString("base64") }))
})

/** POST /mini-apps/publish with exactly these bytes. */
export const publishRaw = (secret: string, body: string | Uint8Array) =>
  rawFetch("/api/agent/mini-apps/publish", {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body
  }) as Effect.Effect<{ status: number; headers: Headers; body: any }, never, TestServer>

/** GET a path as bytes. */
export const fetchBytes = (secret: string, path: string) =>
  Effect.flatMap(TestServer, ({ baseUrl }) =>
    Effect.promise(async () => {
      const response = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${secret}` } })
      return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) }
    }))

/** The issue paths of a 400 answer. */
export const issuePaths = (body: any): Array<string> =>
  Array.isArray(body?.issues) ? body.issues.map((i: { path: string }) => i.path) : []
