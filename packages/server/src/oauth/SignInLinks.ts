/**
 * One-time sign-in links: how a person signs a browser in (Herald has no
 * passwords). Two kinds share one table and one secret: the link an operator
 * or the person prints with `herald admin session link` (to approve an OAuth
 * client: `/oauth/sign-in`, signInHttp.ts), and the link mailed on request
 * from the console (`/api/app/auth/link`, auth/EmailSignIn.ts). Each carries
 * an `hll_…` secret, stored hashed, usable once within 15 minutes; redeeming
 * it opens a new browser session (auth/BrowserSessions.ts), which the route
 * puts in the `herald_session` cookie.
 */
import { NotFound, SIGN_IN_NEXT_MAX, ValidationFailed } from "@herald/api"
import type { Person } from "@herald/api"
import { Context, Effect, Layer, Option } from "effect"
import { BrowserSessions } from "../auth/BrowserSessions.ts"
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

/** The longest `next` of a console link. */
export const LOCAL_NEXT_MAX_LENGTH = SIGN_IN_NEXT_MAX

/**
 * `next` when it is a path on Herald's own origin (`/inbox`, `/join/…?x=1`),
 * else undefined: never an open redirect (`//host`, `/\\host`, a scheme),
 * visible ASCII only so nothing breaks out of the `Location` header.
 */
export const localNext = (publicUrl: string, next: string | undefined): string | undefined => {
  if (next === undefined || next.length > LOCAL_NEXT_MAX_LENGTH || !/^[\x21-\x7e]+$/.test(next)) return undefined
  if (!next.startsWith("/") || next.startsWith("//") || next.includes("\\")) return undefined
  const resolved = URL.parse(next, publicUrl)
  return resolved !== null && resolved.origin === new URL(publicUrl).origin ? next : undefined
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
  /** A console link for a person (by id) to mail: `/api/app/auth/link`, landing on `next` when it is a local path. */
  readonly createForConsole: (userId: string, next?: string) => Effect.Effect<SignInLink>
  /** Spends a link: a new browser session for its person, or none for an unknown, used or expired link. */
  readonly redeem: (token: string, userAgent: string | null) => Effect.Effect<Option.Option<Redeemed>>
  /** The public base URL links are built on (and the session cookie is scoped to). */
  readonly publicUrl: string
}>()("herald/SignInLinks") {
  static readonly layerNoDeps = Layer.effect(SignInLinks, Effect.gen(function*() {
    const repo = yield* SignInLinksRepo
    const identity = yield* Identity
    const sessions = yield* BrowserSessions
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

    const createForConsole = Effect.fn("SignInLinks.createForConsole")(function*(userId: string, next?: string) {
      const token = generateSecret("hll")
      const expiresAt = yield* repo.insert({ tokenHash: hashSecret(token), userId, ttlSeconds: SIGN_IN_LINK_TTL_SECONDS })
      const local = localNext(publicUrl, next)
      const query = new URLSearchParams({ token, ...(local === undefined ? {} : { next: local }) })
      return { url: `${publicUrl}/api/app/auth/link?${query.toString()}`, expiresAt, userId }
    })

    const redeem = Effect.fn("SignInLinks.redeem")(function*(token: string, userAgent: string | null) {
      // A malformed token is refused before any lookup (the checksum catches a mistyped link).
      if (!isWellFormed(token, "hll")) return Option.none<Redeemed>()
      const userId = yield* repo.redeem(hashSecret(token))
      if (Option.isNone(userId)) return Option.none<Redeemed>()
      // The person may have been deleted between the two statements: that link signs no one in.
      const person = yield* Effect.option(identity.me(userId.value))
      if (Option.isNone(person)) return Option.none<Redeemed>()
      const session = yield* sessions.open(person.value.id, userAgent)
      return Option.some<Redeemed>({ session: session.token, person: person.value })
    })

    return SignInLinks.of({ create, createForConsole, redeem, publicUrl })
  }))

  /** Needs Identity (and its Credentials) and SqlClient. */
  static readonly layer = SignInLinks.layerNoDeps.pipe(
    Layer.provide(Layer.mergeAll(SignInLinksRepo.layer, BrowserSessions.layer)),
    Layer.provide(AppConfig.layer)
  )
}
