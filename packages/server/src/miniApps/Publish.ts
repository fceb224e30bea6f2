/**
 * The rules of a published archive beyond its schema (which the route decodes
 * first: every manifest rule and "no extra fields"): each manifest file is in
 * `files` exactly once and no other file is, each decoded file has the
 * manifest's size and SHA-256, `entryPoint` is one of the files, and the
 * decoded files hold at most 8 MiB together. Every broken rule is one issue
 * naming its field, reported together.
 */
import type { MiniAppArchive } from "@herald/api"
import { createHash } from "node:crypto"
import { MINI_APP_MAX_FILES_BYTES } from "../config/Limits.ts"

export interface Issue {
  readonly path: string
  readonly message: string
}

/** SHA-256 of bytes, lowercase hex. */
export const sha256Hex = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex")

/** The issues of a decoded archive (empty: it holds together). Paths start `body.` like the schema's. */
export const archiveIssues = (archive: MiniAppArchive): ReadonlyArray<Issue> => {
  const issues: Array<Issue> = []
  const { files, manifest } = archive
  const declared = new Map<string, number>()
  manifest.files.forEach((file, i) => {
    if (declared.has(file.path)) {
      issues.push({ path: `body.manifest.files[${i}].path`, message: `"${file.path}" is listed more than once.` })
    } else {
      declared.set(file.path, i)
    }
  })
  if (!declared.has(manifest.entryPoint)) {
    issues.push({ path: "body.manifest.entryPoint", message: "entryPoint must be one of the manifest's files." })
  }
  const seen = new Set<string>()
  let total = 0
  files.forEach((file, i) => {
    const at = `body.files[${i}]`
    if (seen.has(file.path)) {
      issues.push({ path: `${at}.path`, message: `"${file.path}" is in the archive more than once.` })
      return
    }
    seen.add(file.path)
    const index = declared.get(file.path)
    if (index === undefined) {
      issues.push({ path: `${at}.path`, message: `"${file.path}" is not in the manifest's files.` })
      return
    }
    const bytes = Buffer.from(file.contentBase64, "base64")
    total += bytes.byteLength
    const expected = manifest.files[index]!
    if (bytes.byteLength !== expected.size) {
      issues.push({
        path: `body.manifest.files[${index}].size`,
        message: `The file decodes to ${bytes.byteLength} bytes, not ${expected.size}.`
      })
    }
    if (sha256Hex(bytes) !== expected.sha256) {
      issues.push({ path: `body.manifest.files[${index}].sha256`, message: "The file's SHA-256 differs from the manifest's." })
    }
  })
  for (const [path, index] of declared) {
    if (!seen.has(path)) {
      issues.push({ path: `body.manifest.files[${index}].path`, message: `"${path}" is missing from the archive's files.` })
    }
  }
  if (total > MINI_APP_MAX_FILES_BYTES) {
    issues.push({ path: "body.files", message: `The files decode to ${total} bytes; at most ${MINI_APP_MAX_FILES_BYTES} are allowed.` })
  }
  return issues
}
