/**
 * What an operator's first hour needs is in docs/operations.md: TLS behind a reverse proxy with a sample
 * configuration that proxies to Herald and streams, the container image of the repository's Dockerfile,
 * and backups with restore for both databases (e2e/backupRestore.test.ts runs them). `.ci/run` builds the
 * image and waits for its /readyz where a container engine answers.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "../..")
const operations = fs.readFileSync(path.join(root, "docs/operations.md"), "utf8")

/** The text of the section under `## heading`, to the next heading of its level or above outside a code block. */
const section = (heading: string) => {
  const lines = operations.split("\n")
  const start = lines.indexOf(`## ${heading}`)
  assert.isAtLeast(start, 0, `docs/operations.md has no "## ${heading}"`)
  let fenced = false
  let end = start + 1
  for (; end < lines.length; end++) {
    if (lines[end]!.startsWith("```")) fenced = !fenced
    else if (!fenced && /^#{1,2} /.test(lines[end]!)) break
  }
  return lines.slice(start, end).join("\n")
}

describe("docs/operations.md", () => {
  it("TLS: a Caddy and an nginx sample proxy to Herald's loopback port, the settings that tie them named", () => {
    const tls = section("TLS: behind a reverse proxy")
    assert.match(tls, /```caddyfile[\s\S]*reverse_proxy 127\.0\.0\.1:8080[\s\S]*?```/)
    assert.match(tls, /```nginx[\s\S]*proxy_pass http:\/\/127\.0\.0\.1:8080;[\s\S]*?```/)
    for (const setting of ["HERALD_PUBLIC_URL", "HERALD_TRUSTED_PROXIES"]) assert.include(tls, setting)
  })

  it("a container image: the Dockerfile it builds serves Herald and checks /readyz", () => {
    const image = section("A container image")
    assert.include(image, "docker build -t herald .")
    const dockerfile = fs.readFileSync(path.join(root, "Dockerfile"), "utf8")
    assert.match(dockerfile, /^CMD \["node", "apps\/herald\/src\/main\.ts", "serve"\]$/m)
    assert.match(dockerfile, /^HEALTHCHECK [\s\S]*\/readyz/m)
  })

  it("backups and restore for PostgreSQL and for the embedded database", () => {
    const backups = section("Backups and restore")
    for (const step of ["pg_dump -Fc", "pg_restore --no-owner --exit-on-error", "tar -C", "-xzf"]) assert.include(backups, step)
    assert.include(backups, "### PostgreSQL")
    assert.include(backups, "### The embedded database")
  })
})
