/** Person API handlers of teams and families: the Agent API's reads and membership acts, for the signed-in person. */
import { AppApi, CurrentPerson, ok, TeamInviteList, TeamList } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { personActor } from "./AuditTrail.ts"
import { Invites } from "./Invites.ts"
import { Teams } from "./Teams.ts"

export const PersonTeamsHandlers = HttpApiBuilder.group(AppApi, "teams", Effect.fn(function*(handlers) {
  const teams = yield* Teams
  const invites = yield* Invites
  return handlers
    .handle("list", () =>
      Effect.flatMap(CurrentPerson, (person) => teams.list(person.userId)).pipe(Effect.map((items) => new TeamList({ items }))))
    .handle("get", ({ params }) => Effect.flatMap(CurrentPerson, (person) => teams.detail(person.userId, params.id)))
    .handle("leave", ({ params }) =>
      Effect.flatMap(personActor, (actor) => teams.leave(actor, actor.userId!, params.id)).pipe(Effect.as(ok)))
    .handle("invites", ({ params }) =>
      Effect.flatMap(CurrentPerson, (person) => invites.list(person.userId, params.id)).pipe(
        Effect.map((items) => new TeamInviteList({ items }))
      ))
    .handle("invite", ({ params, payload }) =>
      Effect.flatMap(personActor, (actor) => invites.create(actor, actor.userId!, params.id, payload)))
    .handle("revokeInvite", ({ params }) =>
      Effect.flatMap(personActor, (actor) => invites.revoke(actor, actor.userId!, params.id, params.inviteId)))
}))
