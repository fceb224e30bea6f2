/**
 * The Person API's session middleware: a person's `hls_…` session, sent as
 * `Authorization: Bearer …` (the phone app, scripts, the typed client) or, when
 * no such header is sent, as the `herald_session` cookie a browser sign-in set
 * (SessionCookie.ts). A cookie-authenticated request must pass the CSRF rule
 * (403 `CSRF_REJECTED`); a bearer one is unaffected, and its hot path gains
 * only an emptiness test. Only once the session checks out is the body read
 * and guarded (http/BodyGuard.ts).
 */
import { CurrentPerson, PersonAuth, Unauthorized } from "@herald/api"
import type { CsrfRejected } from "@herald/api"
import { Context, Effect, Layer, Redacted } from "effect"
import { HttpServerRequest } from "effect/http"
import type { HttpServerResponse } from "effect/http"
import type { unhandled } from "effect/Types"
import { AppConfig } from "../config/AppConfig.ts"
import { guardBody, guardCurrentBody } from "../http/BodyGuard.ts"
import { Credentials } from "./Credentials.ts"
import { csrfRefusal, sessionCookieOf } from "./SessionCookie.ts"

const missing = new Unauthorized({
  error: "Missing session: send Authorization: Bearer <session token> (hls_…), or sign in from a browser (the herald_session cookie)."
})

export const PersonAuthLive = Layer.effect(PersonAuth, Effect.gen(function*() {
  const credentials = yield* Credentials
  const publicOrigin = new URL((yield* AppConfig).publicUrl).origin
  return PersonAuth.of({
    sessionToken: (httpEffect, { credential }) => {
      const bearer = Redacted.value(credential)
      if (bearer !== "") {
        return Effect.flatMap(
          credentials.authenticateSession(bearer),
          (session) => Effect.provideService(guardCurrentBody(httpEffect), CurrentPerson, { userId: session.userId, sessionId: session.id })
        )
      }
      return Effect.withFiber((fiber): Effect.Effect<HttpServerResponse.HttpServerResponse, Unauthorized | CsrfRejected | unhandled> => {
        const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
        const cookie = sessionCookieOf(request)
        if (cookie === undefined) return Effect.fail(missing)
        const refused = csrfRefusal(request, publicOrigin)
        if (refused !== undefined) return Effect.fail(refused)
        return Effect.flatMap(
          credentials.authenticateSession(cookie),
          (session) => Effect.provideService(guardBody(request, httpEffect), CurrentPerson, { userId: session.userId, sessionId: session.id })
        )
      })
    }
  })
}))
