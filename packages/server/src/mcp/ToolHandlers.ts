/**
 * Each MCP tool as a thin call of the capability its Agent API route calls,
 * as the token the request authenticated (`CurrentAgent`, provided per
 * request by McpAuth.ts). Inputs that the route's payload schema checks as a
 * whole (a live activity's start and update) are decoded with that schema, so
 * a tool refuses exactly what the route refuses, with the same
 * `VALIDATION_FAILED` issues.
 */
import { CurrentAgent, InteractionCreated, StartActivityRequest, UpdateActivityRequest, ValidationFailed } from "@herald/api"
import type { Interaction } from "@herald/api"
import { Effect, Schema, SchemaIssue } from "effect"
import { LiveActivities } from "../activities/LiveActivities.ts"
import { AddressThrottle } from "../http/AddressThrottle.ts"
import { Inbox } from "../inbox/Inbox.ts"
import { Interactions } from "../interactions/Interactions.ts"
import { Notifications } from "../notifications/Notifications.ts"
import { Pages } from "../oncall/Pages.ts"
import { agentActor } from "../teams/AuditTrail.ts"
import { HeraldTools, INBOX_DEFAULT_ITEMS, MAX_WAIT_SECONDS } from "./Tools.ts"

const format = SchemaIssue.makeFormatterStandardSchemaV1()

/** Decodes a route's payload from tool arguments; a refusal is the route's 400 body, issues under `arguments`. */
const decodeAs = <S extends Schema.Codec<any, any>>(schema: S, input: unknown): Effect.Effect<S["Type"], ValidationFailed> =>
  Schema.decodeUnknownEffect(schema)(input, { onExcessProperty: "error", errors: "all" }).pipe(
    Effect.mapError((error) =>
      new ValidationFailed({
        error: "The request failed validation.",
        issues: format(error.issue).issues.slice(0, 50).map((issue) => ({
          path: ["arguments", ...(issue.path ?? []).map((s) => String(typeof s === "object" && s !== null ? s.key : s))].join("."),
          message: issue.message
        }))
      })
    )
  ) as Effect.Effect<S["Type"], ValidationFailed>

/** The line `ask` adds to the prompt it answers: what happened, and what to do next. */
const askMessage = (prompt: Interaction, waited: number): string => {
  switch (prompt.status) {
    case "pending":
      return `No answer after ${waited} s; the prompt is still pending. Call \`wait\` with id "${prompt.id}" to keep ` +
        "waiting (do not ask again), or `cancel` it if it no longer matters."
    case "replied":
      return prompt.timedOut
        ? `Nobody answered before the prompt expired; it resolved with its default reply: ${prompt.response ?? ""} (timedOut).`
        : `The person replied: ${prompt.response ?? ""}`
    case "canceled":
    case "expired":
      return `The prompt ended without an answer (${prompt.status}). Treat it as a no.`
    default:
      return prompt.timedOut
        ? `Nobody answered before the prompt expired; it resolved with its default answer: ${prompt.status} (timedOut). ` +
          "No person decided."
        : `The person answered: ${prompt.status}.`
  }
}

/** Keys with a value only: the API's optional keys take no `undefined` (`exactOptionalPropertyTypes`). */
const defined = <A extends Record<string, unknown>>(record: A): { [K in keyof A]?: Exclude<A[K], undefined> } =>
  Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as any

export const ToolHandlersLayer = HeraldTools.toLayer(Effect.gen(function*() {
  const notifications = yield* Notifications
  const interactions = yield* Interactions
  const activities = yield* LiveActivities
  const pages = yield* Pages
  const inbox = yield* Inbox
  const throttle = yield* AddressThrottle
  return HeraldTools.of({
    notify: (params) => Effect.flatMap(CurrentAgent, (agent) => notifications.send(agent, params)),

    ask: ({ waitSeconds, ...input }) =>
      Effect.gen(function*() {
        const agent = yield* CurrentAgent
        const created = yield* interactions.create(agent, input)
        const seconds = waitSeconds ?? MAX_WAIT_SECONDS
        // The service's long-poll: parked on the prompt's entity, ended early by a revocation.
        const prompt = created.interaction.status === "pending"
          ? yield* interactions.wait(agent.tokenId, created.interaction.id, seconds)
          : created.interaction
        return new InteractionCreated({
          interaction: prompt,
          accepted: created.accepted,
          ...defined({ liveActivityId: created.liveActivityId, queued: created.queued }),
          message: askMessage(prompt, seconds)
        })
      }),

    wait: ({ id, waitSeconds }) =>
      Effect.flatMap(CurrentAgent, (agent) => interactions.wait(agent.tokenId, id, waitSeconds ?? MAX_WAIT_SECONDS)),

    cancel: ({ id }) => Effect.flatMap(CurrentAgent, (agent) => interactions.cancel(agent.tokenId, id)),

    progress: ({ action, expiresInSeconds, key, priority, props, replace }) =>
      Effect.gen(function*() {
        const agent = yield* CurrentAgent
        switch (action) {
          case "start": {
            const input = yield* decodeAs(StartActivityRequest, { key, props: props ?? {}, ...defined({ replace, expiresInSeconds }) })
            return yield* activities.start(agent, input)
          }
          case "update": {
            const input = yield* decodeAs(UpdateActivityRequest, defined({ props, priority }))
            return yield* activities.update(agent.tokenId, key, input)
          }
          case "end":
            return yield* activities.end(agent.tokenId, key)
        }
      }),

    page: ({ groupId, ...input }) =>
      Effect.gen(function*() {
        const agent = yield* CurrentAgent
        const actor = yield* Effect.provideService(agentActor, AddressThrottle, throttle)
        const outcome = yield* pages.create(agent, actor, groupId, input, undefined)
        return { page: outcome.page, deduplicated: outcome.deduplicated }
      }),

    inbox: ({ limit, project, unread }) =>
      Effect.flatMap(CurrentAgent, (agent) =>
        inbox.list(agent.userId, {
          limit: limit ?? INBOX_DEFAULT_ITEMS,
          ...defined({ project }),
          ...(unread === true ? { unread: "true" as const } : {})
        }))
  })
}))
