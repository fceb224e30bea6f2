/** A person and an API token written straight through the identity repo, for tests below the HTTP API. */
import type { Scope } from "@herald/api"
import { Effect } from "effect"
import { displayPrefix, generateSecret, hashSecret } from "../../src/auth/Secrets.ts"
import { IdentityRepo } from "../../src/identity/IdentityRepo.ts"
import { makeId } from "../../src/lib/Ids.ts"

export const seedToken = (options: {
  readonly name?: string
  readonly scopes?: ReadonlyArray<Scope>
  readonly expiresAt?: string | null
} = {}) =>
  Effect.gen(function*() {
    const repo = yield* IdentityRepo
    const userId = yield* makeId("usr")
    yield* repo.insertUser({ id: userId, email: `${userId}@example.test`, name: "seed" }).pipe(Effect.orDie)
    const secret = generateSecret("hld")
    const token = yield* repo.insertToken({
      id: yield* makeId("tok"),
      userId,
      name: options.name ?? "seeded",
      prefix: displayPrefix(secret),
      tokenHash: hashSecret(secret),
      scopes: options.scopes ?? ["devices:read"],
      expiresAt: options.expiresAt ?? null
    })
    return { userId, secret, token }
  })
