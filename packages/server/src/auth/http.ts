/**
 * Person API handlers of sign-in (issue 32): the e-mailed link, passkeys and
 * sessions. Thin: decode → service → answer; what they add is the browser's
 * part — the `herald_session` cookie set or cleared on the answer, the
 * redirect of a link, `Retry-After` on a refused request, and the `Origin`
 * check of routes that take no session yet.
 */
import { AppApi, CurrentPerson, ok, Person, RateLimited, SIGN_IN_EMAIL_WINDOW_MINUTES, SIGN_IN_EMAILS_PER_WINDOW } from "@herald/api"
import type { CsrfRejected } from "@herald/api"
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server"
import { Effect, Option } from "effect"
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { seconds } from "../billing/RateLimitHeaders.ts"
import { pageHeaders } from "../oauth/ConsentPage.ts"
import { localNext, SignInLinks } from "../oauth/SignInLinks.ts"
import { BrowserSessions } from "./BrowserSessions.ts"
import { EmailSignIn } from "./EmailSignIn.ts"
import { Passkeys } from "./Passkeys.ts"
import { originRefusal, userAgentOf, withoutSessionCookie, withSessionCookie } from "./SessionCookie.ts"

/** The longest `token` looked at: a real one is 53 characters; anything longer is refused unread. */
const TOKEN_MAX_LENGTH = 200

/** Where a link that does not work lands: the console's sign-in page says why. */
export const LINK_FAILED_PATH = "/sign-in?error=link"

/** Runs `f` on this request's answer, whatever it is. */
const onAnswer = (f: (response: HttpServerResponse.HttpServerResponse) => HttpServerResponse.HttpServerResponse) =>
  HttpEffect.appendPreResponseHandler((_request, response) => Effect.succeed(f(response)))

/** Fails with 403 `CSRF_REJECTED` when the request names another origin than Herald's. */
const sameOrigin = (publicOrigin: string): Effect.Effect<void, CsrfRejected, HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const refused = originRefusal(request, publicOrigin)
    return refused === undefined ? Effect.void : Effect.fail(refused)
  })

const redirect = (location: string) => HttpServerResponse.redirect(location, { status: 302, headers: pageHeaders })

export const SignInHandlers = HttpApiBuilder.group(AppApi, "auth", Effect.fn(function*(handlers) {
  const links = yield* SignInLinks
  const email = yield* EmailSignIn
  const passkeys = yield* Passkeys
  const sessions = yield* BrowserSessions
  const { publicOrigin, publicUrl } = sessions
  return handlers
    .handle("emailLink", ({ payload }) =>
      Effect.gen(function*() {
        yield* sameOrigin(publicOrigin)
        const requested = yield* email.request(payload.email, payload.next)
        if (requested.accepted) return { sent: true } as const
        const retryAfter = seconds(requested.retryAfterSeconds * 1000)
        yield* onAnswer((response) => HttpServerResponse.setHeader(response, "retry-after", retryAfter))
        return yield* new RateLimited({
          error: `Too many sign-in links asked for this e-mail address: at most ${SIGN_IN_EMAILS_PER_WINDOW} per ` +
            `${SIGN_IN_EMAIL_WINDOW_MINUTES} minutes. Retry after ${retryAfter} s.`
        })
      }))
    .handle("link", ({ query, request }) =>
      Effect.gen(function*() {
        const token = query.token ?? ""
        const redeemed = token.length > TOKEN_MAX_LENGTH ? Option.none() : yield* links.redeem(token, userAgentOf(request))
        if (Option.isNone(redeemed)) return redirect(LINK_FAILED_PATH)
        return withSessionCookie(redirect(localNext(publicUrl, query.next) ?? "/"), redeemed.value.session, publicUrl)
      }))
    .handle("passkeyOptions", () => Effect.andThen(sameOrigin(publicOrigin), passkeys.authenticationOptions))
    .handle("passkey", ({ payload, request }) =>
      Effect.gen(function*() {
        yield* sameOrigin(publicOrigin)
        const signedIn = yield* passkeys.authenticate(
          { challengeId: payload.challengeId, response: payload.response as unknown as AuthenticationResponseJSON },
          userAgentOf(request)
        )
        yield* onAnswer((response) => withSessionCookie(response, signedIn.session.token, publicUrl))
        return new Person(signedIn.person)
      }))
}))

export const PersonPasskeysHandlers = HttpApiBuilder.group(AppApi, "passkeys", Effect.fn(function*(handlers) {
  const passkeys = yield* Passkeys
  return handlers
    .handle("options", () => Effect.flatMap(CurrentPerson, (person) => passkeys.registrationOptions(person.userId)))
    .handle("register", ({ payload }) =>
      Effect.flatMap(CurrentPerson, (person) =>
        passkeys.register(person.userId, {
          challengeId: payload.challengeId,
          response: payload.response as unknown as RegistrationResponseJSON,
          name: payload.name
        })))
    .handle("list", () => Effect.flatMap(CurrentPerson, (person) => passkeys.list(person.userId)))
    .handle("remove", ({ params }) =>
      Effect.flatMap(CurrentPerson, (person) => passkeys.remove(person.userId, params.id)).pipe(Effect.as(ok)))
}))

export const PersonSessionsHandlers = HttpApiBuilder.group(AppApi, "sessions", Effect.fn(function*(handlers) {
  const sessions = yield* BrowserSessions
  const signedOut = onAnswer((response) => withoutSessionCookie(response, sessions.publicUrl))
  return handlers
    .handle("list", () => Effect.flatMap(CurrentPerson, (person) => sessions.list(person.userId, person.sessionId)))
    .handle("revoke", ({ params }) =>
      Effect.gen(function*() {
        const person = yield* CurrentPerson
        yield* sessions.revoke(person.userId, params.id)
        if (params.id === person.sessionId) yield* signedOut
        return ok
      }))
    .handle("signOut", () =>
      Effect.gen(function*() {
        const person = yield* CurrentPerson
        // Already revoked by a race: signed out all the same.
        yield* sessions.revoke(person.userId, person.sessionId).pipe(Effect.ignore)
        yield* signedOut
        return ok
      }))
}))
