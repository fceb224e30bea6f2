/** Person API handlers of pages: acknowledge and escalate from the phone. */
import { AppApi } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { personActor } from "../teams/AuditTrail.ts"
import { Pages } from "./Pages.ts"

export const PersonPagesHandlers = HttpApiBuilder.group(AppApi, "pages", Effect.fn(function*(handlers) {
  const pages = yield* Pages
  return handlers
    .handle("acknowledge", ({ params }) =>
      Effect.flatMap(personActor, (actor) => pages.acknowledge({ ...actor, userId: actor.userId! }, params.id)))
    .handle("escalate", ({ params }) =>
      Effect.flatMap(personActor, (actor) => pages.escalate({ ...actor, userId: actor.userId! }, params.id)))
}))
