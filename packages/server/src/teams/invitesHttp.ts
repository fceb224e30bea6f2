/** Handlers of team invites (Agent API) and of accepting one (Person API). */
import { AgentApi, AppApi, CurrentAgent, CurrentPerson, TeamInviteList } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { agentActor, personActor } from "./AuditTrail.ts"
import { Invites } from "./Invites.ts"

export const TeamInvitesHandlers = HttpApiBuilder.group(AgentApi, "teamInvites", Effect.fn(function*(handlers) {
  const invites = yield* Invites
  return handlers
    .handle("list", ({ params }) =>
      Effect.flatMap(CurrentAgent, (agent) => invites.list(agent.userId, params.id)).pipe(
        Effect.map((items) => new TeamInviteList({ items }))
      ))
    .handle("create", ({ params, payload }) =>
      Effect.flatMap(agentActor, (actor) => invites.create(actor, actor.userId!, params.id, payload)))
    .handle("revoke", ({ params }) =>
      Effect.flatMap(agentActor, (actor) => invites.revoke(actor, actor.userId!, params.id, params.inviteId)))
}))

export const PersonInvitesHandlers = HttpApiBuilder.group(AppApi, "invites", Effect.fn(function*(handlers) {
  const invites = yield* Invites
  return handlers
    .handle("accept", ({ payload }) =>
      Effect.flatMap(personActor, (actor) => Effect.flatMap(CurrentPerson, (person) => invites.accept(actor, person.userId, payload))))
    .handle("preview", ({ params }) => Effect.flatMap(CurrentPerson, (person) => invites.preview(person.userId, params.code)))
}))
