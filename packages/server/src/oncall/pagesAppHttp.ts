/** Person API handlers of pages: the open pages of the person's teams, acknowledge and escalate. */
import { AppApi, CurrentPerson } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { personActor } from "../teams/AuditTrail.ts"
import { Pages } from "./Pages.ts"

export const PersonPagesHandlers = HttpApiBuilder.group(AppApi, "pages", Effect.fn(function*(handlers) {
  const pages = yield* Pages
  return handlers
    .handle("list", ({ query }) => Effect.flatMap(CurrentPerson, (person) => pages.openForMember(person.userId, query)))
    .handle("acknowledge", ({ params }) =>
      Effect.flatMap(personActor, (actor) => pages.acknowledge({ ...actor, userId: actor.userId! }, params.id)))
    .handle("escalate", ({ params }) =>
      Effect.flatMap(personActor, (actor) => pages.escalate({ ...actor, userId: actor.userId! }, params.id)))
}))
