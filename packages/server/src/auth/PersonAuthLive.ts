/**
 * The Person API's bearer middleware: a person's `hls_…` session token. Only
 * once it checks out is the body read and guarded (http/BodyGuard.ts).
 */
import { CurrentPerson, PersonAuth } from "@herald/api"
import { Effect, Layer, Redacted } from "effect"
import { guardCurrentBody } from "../http/BodyGuard.ts"
import { Credentials } from "./Credentials.ts"

export const PersonAuthLive = Layer.effect(PersonAuth, Effect.gen(function*() {
  const credentials = yield* Credentials
  return PersonAuth.of({
    sessionToken: (httpEffect, { credential }) =>
      Effect.flatMap(
        credentials.authenticateSession(Redacted.value(credential)),
        (session) => Effect.provideService(guardCurrentBody(httpEffect), CurrentPerson, { userId: session.userId, sessionId: session.id })
      )
  })
}))
