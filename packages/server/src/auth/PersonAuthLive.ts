/** The Person API's bearer middleware: a person's `hls_…` session token. */
import { CurrentPerson, PersonAuth } from "@herald/api"
import { Effect, Layer, Redacted } from "effect"
import { Credentials } from "./Credentials.ts"

export const PersonAuthLive = Layer.effect(PersonAuth, Effect.gen(function*() {
  const credentials = yield* Credentials
  return PersonAuth.of({
    sessionToken: (httpEffect, { credential }) =>
      Effect.flatMap(
        credentials.authenticateSession(Redacted.value(credential)),
        (session) => Effect.provideService(httpEffect, CurrentPerson, { userId: session.userId, sessionId: session.id })
      )
  })
}))
