/** `text`: the body is the message (decisions.md); ntfy's `Title`/`X-Title` header may name the title. */
import type { InboundRequest, Mapped, Refusal } from "./Inbound.ts"
import { finish, headerPriority } from "./Inbound.ts"

export const mapText = (request: InboundRequest): Mapped | Refusal =>
  finish("text", {
    title: request.headers["x-title"] ?? request.headers["title"] ?? null,
    body: request.text,
    url: request.headers["x-click"] ?? request.headers["click"] ?? null
  }, null, { strict: true, priority: headerPriority(request) })
