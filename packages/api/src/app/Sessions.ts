/**
 * A person's sessions: where they are signed in (browsers, the phone app,
 * scripts), each revocable, and signing this one out.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Ok, Timestamp } from "../domain/Common.ts"
import { NotFound } from "../errors.ts"
import { personOperation } from "../Operation.ts"
import { PersonAuth } from "../Security.ts"

/** Sessions listed: the most recently used live ones. */
export const SESSIONS_LISTED = 100

export const SessionId = Schema.String.check(Schema.isPattern(/^ses_[0-9A-Za-z]{1,64}$/)).annotate({
  identifier: "SessionId",
  description: "An id starting `ses_`."
})

export class SessionInfo extends Schema.Class<SessionInfo>("SessionInfo")({
  id: Schema.String,
  createdAt: Timestamp,
  lastUsedAt: Schema.NullOr(Timestamp),
  /** Null: a session made by `herald admin session create`, which does not expire. */
  expiresAt: Schema.NullOr(Timestamp),
  /** The browser's `User-Agent` when it signed in (at most 300 characters), or null. */
  userAgent: Schema.NullOr(Schema.String),
  /** This request's own session. */
  current: Schema.Boolean
}) {}

export class SessionList extends Schema.Class<SessionList>("SessionList")({
  items: Schema.Array(SessionInfo)
}) {}

export class PersonSessionsGroup extends HttpApiGroup.make("sessions")
  .add(
    HttpApiEndpoint.get("list", "/sessions", { success: SessionList }).pipe(personOperation({
      summary: "List my sessions",
      description: `The person's live sessions (not revoked, not expired), most recently used first, at most ${SESSIONS_LISTED}; ` +
        "`current` marks the one this request came with. `lastUsedAt` is kept to the minute."
    })),
    HttpApiEndpoint.delete("revoke", "/sessions/:id", { params: { id: SessionId }, success: Ok, error: NotFound }).pipe(
      personOperation({
        summary: "Revoke a session",
        description: "Signs that session out everywhere within a second (its next request answers 401). Revoking the " +
          "current session also clears the `herald_session` cookie. Another person's session answers 404."
      })
    ),
    HttpApiEndpoint.post("signOut", "/auth/sign-out", { success: Ok }).pipe(personOperation({
      summary: "Sign out",
      description: "Revokes the session this request came with and clears the `herald_session` cookie."
    }))
  )
  .middleware(PersonAuth)
{}
