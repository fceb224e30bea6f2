/**
 * Endpoint annotations shared by both faces: the scopes an operation needs
 * and its documentation. The bearer middleware reads `RequiredScopes` from the
 * endpoint it guards; the OpenAPI document shows the same scopes in the
 * operation's description and as its security requirement, so the docs and
 * the enforcement come from one value.
 */
import { Context } from "effect"
import { OpenApi } from "effect/http-api"
import type { Scope } from "./domain/Scope.ts"

/** The scopes an Agent API operation requires; `[]` for "none". Every agent endpoint carries it. */
export class RequiredScopes extends Context.Service<RequiredScopes, ReadonlyArray<Scope>>()("herald/RequiredScopes") {}

/**
 * Marks a sending operation (a push, a prompt, a live activity start or update, a page): it
 * counts against the tighter per-token send limit as well as the overall one.
 */
export class SendingOperation extends Context.Service<SendingOperation, boolean>()("herald/SendingOperation") {}

/** The security scheme names, one per face (one scheme per middleware). */
export const AgentScheme = "agentToken"
export const PersonScheme = "sessionToken"

interface OperationDoc {
  readonly summary: string
  /** The spec's Rules cell and any decision from decisions.md that the operation implements. */
  readonly description: string
}

/** What these helpers need of an endpoint: annotations keep its type. */
interface Annotatable {
  annotate(key: Context.Key<any, any>, value: unknown): unknown
}

const annotateAll = <E extends Annotatable>(endpoint: E, entries: ReadonlyArray<readonly [Context.Key<any, any>, unknown]>): E =>
  entries.reduce<E>((e, [key, value]) => e.annotate(key, value) as E, endpoint)

/** Documents and scopes an Agent API endpoint in one step. */
export const agentOperation = (doc: OperationDoc & { readonly scopes: ReadonlyArray<Scope>; readonly sends?: true }) =>
<E extends Annotatable>(endpoint: E): E => {
  const scopeLine = doc.scopes.length === 0
    ? "Scopes: none (any valid token)."
    : `Scopes: ${doc.scopes.map((s) => `\`${s}\``).join(", ")}.`
  return annotateAll(endpoint, [
    [RequiredScopes, doc.scopes],
    [SendingOperation, doc.sends === true],
    [OpenApi.Summary, doc.summary],
    [OpenApi.Description, `${doc.description}\n\n${scopeLine}${doc.sends === true ? " Counts against the per-token send limit." : ""}`],
    [OpenApi.Override, { security: [{ [AgentScheme]: [...doc.scopes] }] }]
  ])
}

/** Documents a Person API endpoint (session token, no scopes). */
export const personOperation = (doc: OperationDoc) =>
<E extends Annotatable>(endpoint: E): E =>
  annotateAll(endpoint, [[OpenApi.Summary, doc.summary], [OpenApi.Description, doc.description]])
