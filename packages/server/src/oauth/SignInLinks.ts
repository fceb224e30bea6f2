/**
 * One-time sign-in links: how a person signs a browser in to approve an OAuth
 * client (the consent page needs a signed-in person, and Herald has no
 * passwords). An operator or the person runs `herald admin session link`; the
 * link carries an `hll_…` secret, stored hashed, usable once within 15
 * minutes; redeeming it opens a new Person API session, which the route
 * (signInHttp.ts) puts in the `herald_session` cookie.
 */
import { NotFound, ValidationFailed } from "@herald/api"
import type { Person } from "@herald/api"
import { Context, Effect, Layer, Option } from "effect"
import { generateSecret, hashSecret, isWellFormed } from "../auth/Secrets.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { Identity } from "../identity/Identity.ts"
import { SignInLinksRepo } from "./SignInLinksRepo.ts"

/** How long a link stays usable: long enough to copy it into a browser, short enough to be worthless in a log. */
export const SIGN_IN_LINK_TTL_SECONDS = 15 * 60

/** The longest `next` kept: an authorization request's query, with room for a long state and scope list. */
export const NEXT_MAX_LENGTH = 4000

const AUTHORIZE_PATH = "/oauth/authorize"

/**
 * `next` when it is a same-origin path to the authorization endpoint, else
 * undefined: the sign-in link must never become an open redirect. Visible
 * ASCII only, so nothing can break out of the `Location` header.
 */
export const authorizationNext = (publicUrl: string, next: string | undefined): string | undefined => {
  if (next === undefined || next.length > NEXT_MAX_LENGTH || !/^[\x21-\x7e]+$/.test(next)) return undefined
  if (next !== AUTHORIZE_PATH && !next.startsWith(`${AUTHORIZE_PATH}?`)) return undefined
  // The prefix already pins the path; resolving it against the public URL is the belt to those braces.
  const resolved = URL.parse(next, publicUrl)
  return resolved !== null && resolved.origin === new URL(publicUrl).origin && resolved.pathname === AUTHORIZE_PATH ? next : undefined
}

export interface SignInLink {
  readonly url: string
  readonly expiresAt: string
  readonly userId: string
}

export interface Redeemed {
  /** The new Person API session's `hls_…` token (the cookie's value). */
  readonly session: string
  readonly person: Person
}

export class SignInLinks extends Context.Service<SignInLinks, {
  /** A link for a person (email or id), optionally returning to an authorization request (`next`). */
  readonly create: (user: string, next?: string) => Effect.Effect<SignInLink, NotFound | ValidationFailed>
  /** Spends a link: a new session for its person, or none for an unknown, used or expired link. */
  readonly redeem: (token: string) => Effect.Effect<Option.Option<Redeemed>>
  /** The public base URL links are built on (and the session cookie is scoped to). */
  readonly publicUrl: string
}>()("herald/oauth/SignInLinks") {
  static readonly layerNoDeps = Layer.effect(SignInLinks, Effect.gen(function*() {
    const repo = yield* SignInLinksRepo
    const identity = yield* Identity
    const { publicUrl } = yield* AppConfig

    const create = Effect.fn("SignInLinks.create")(function*(user: string, next?: string) {
      if (next !== undefined && authorizationNext(publicUrl, next) === undefined) {
        return yield* new ValidationFailed({
          error: "Invalid sign-in link.",
          issues: [{ path: "next", message: `Expected a path starting ${AUTHORIZE_PATH} (at most ${NEXT_MAX_LENGTH} characters)` }]
        })
      }
      const person = yield* identity.me(user).pipe(Effect.mapError(() => new NotFound({ error: `Person ${user} not found.` })))
      const token = generateSecret("hll")
      const expiresAt = yield* repo.insert({ tokenHash: hashSecret(token), userId: person.id, ttlSeconds: SIGN_IN_LINK_TTL_SECONDS })
      const query = new URLSearchParams({ token, ...(next === undefined ? {} : { next }) })
      return { url: `${publicUrl}/oauth/sign-in?${query.toString()}`, expiresAt, userId: person.id }
    })

    const redeem = Effect.fn("SignInLinks.redeem")(function*(token: string) {
      // A malformed token is refused before any lookup (the checksum catches a mistyped link).
      if (!isWellFormed(token, "hll")) return Option.none<Redeemed>()
      const userId = yield* repo.redeem(hashSecret(token))
      if (Option.isNone(userId)) return Option.none<Redeemed>()
      // The person may have been deleted between the two statements: that link signs no one in.
      return yield* Effect.all([identity.createSession(userId.value), identity.me(userId.value)]).pipe(
        Effect.map(([session, person]) => Option.some<Redeemed>({ session: session.token, person })),
        Effect.catchTag("NotFound", () => Effect.succeed(Option.none<Redeemed>()))
      )
    })

    return SignInLinks.of({ create, redeem, publicUrl })
  }))

  static readonly layer = SignInLinks.layerNoDeps.pipe(
    Layer.provide(SignInLinksRepo.layer),
    Layer.provide(AppConfig.layer)
  )
}
