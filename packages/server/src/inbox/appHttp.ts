/** Person API handlers of the inbox: the Agent API's reads for the signed-in person, and the live stream. */
import { AppApi, CurrentPerson } from "@herald/api"
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Inbox } from "./Inbox.ts"
import { InboxStream } from "./InboxStream.ts"

export const PersonInboxHandlers = HttpApiBuilder.group(AppApi, "inbox", Effect.fn(function*(handlers) {
  const inbox = yield* Inbox
  const live = yield* InboxStream
  return handlers
    .handle("list", ({ query }) => Effect.flatMap(CurrentPerson, (person) => inbox.list(person.userId, query)))
    .handle("stream", () =>
      Effect.flatMap(CurrentPerson, (person) => live.open(person)).pipe(
        Effect.map((body) =>
          HttpServerResponse.stream(body, {
            contentType: "text/event-stream",
            // No cache keeps it, and no proxy holds its events back to batch them.
            headers: { "cache-control": "no-store", "x-accel-buffering": "no" }
          })
        )
      ))
    .handle("readAll", ({ payload }) =>
      Effect.flatMap(CurrentPerson, (person) =>
        payload.readThroughToken === undefined
          ? inbox.readAllNow(person.userId)
          : inbox.readAll(person.userId, payload.readThroughToken)))
    .handle("get", ({ params }) => Effect.flatMap(CurrentPerson, (person) => inbox.get(person.userId, params.id)))
    .handle("read", ({ params }) => Effect.flatMap(CurrentPerson, (person) => inbox.markRead(person.userId, params.id)))
    .handle("unread", ({ params }) => Effect.flatMap(CurrentPerson, (person) => inbox.markUnread(person.userId, params.id)))
}))
