/**
 * Endpoint annotations shared by both faces: the scopes an operation needs
 * and its documentation. The bearer middleware reads `RequiredScopes` from the
 * endpoint it guards; the OpenAPI document shows the same scopes in the
 * operation's description and as its security requirement, so the docs and
 * the enforcement come from one value. `OneTimeSecret` likewise marks the
 * operations whose answers the server keeps out of every cache.
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

/**
 * Marks an operation whose success answer carries a secret shown once (an API token, an inbound
 * webhook URL, a signing or callback secret, a pass or the session it opens, an invite code, a
 * client secret, OAuth tokens): the server sends every answer of it, errors included, with
 * `Cache-Control: no-store` and `Pragma: no-cache`, so no cache or proxy keeps the secret
 * (the server's http/Edge.ts reads it from its route table). `packages/api/test/oneTimeSecret.test.ts` fails when an
 * endpoint whose success schema has a field named like a secret lacks it.
 */
export class OneTimeSecret extends Context.Service<OneTimeSecret, boolean>()("herald/OneTimeSecret") {}

/** What the OpenAPI description of a {@link OneTimeSecret} operation says. */
export const oneTimeSecretNote = "Every answer, errors included, is sent with `Cache-Control: no-store` and `Pragma: no-cache`: no cache keeps the secret it carries."

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
  readonly annotations: Context.Context<never>
  annotate(key: Context.Key<any, any>, value: unknown): unknown
}

const annotateAll = <E extends Annotatable>(endpoint: E, entries: ReadonlyArray<readonly [Context.Key<any, any>, unknown]>): E =>
  entries.reduce<E>((e, [key, value]) => e.annotate(key, value) as E, endpoint)

/**
 * Marks an endpoint {@link OneTimeSecret} and says so at the end of its OpenAPI description (pipe
 * it after the annotation that sets the description).
 */
export const oneTimeSecret = <E extends Annotatable>(endpoint: E): E => {
  const description = Context.getOrUndefined(endpoint.annotations, OpenApi.Description)
  return annotateAll(endpoint, [
    [OneTimeSecret, true],
    [OpenApi.Description, description === undefined ? oneTimeSecretNote : `${description}\n\n${oneTimeSecretNote}`]
  ])
}

/** `secret: true`: the success answer carries a secret shown once ({@link OneTimeSecret}). */
interface SecretDoc {
  readonly secret?: true
}

/** Documents and scopes an Agent API endpoint in one step. */
export const agentOperation = (doc: OperationDoc & SecretDoc & { readonly scopes: ReadonlyArray<Scope>; readonly sends?: true }) =>
<E extends Annotatable>(endpoint: E): E => {
  const scopeLine = doc.scopes.length === 0
    ? "Scopes: none (any valid token)."
    : `Scopes: ${doc.scopes.map((s) => `\`${s}\``).join(", ")}.`
  const documented = annotateAll(endpoint, [
    [RequiredScopes, doc.scopes],
    [SendingOperation, doc.sends === true],
    [OpenApi.Summary, doc.summary],
    [OpenApi.Description, `${doc.description}\n\n${scopeLine}${doc.sends === true ? " Counts against the per-token send limit." : ""}`],
    [OpenApi.Override, { security: [{ [AgentScheme]: [...doc.scopes] }] }]
  ])
  return doc.secret === true ? oneTimeSecret(documented) : documented
}

/** Documents a Person API endpoint (session token, no scopes). */
export const personOperation = (doc: OperationDoc & SecretDoc) =>
<E extends Annotatable>(endpoint: E): E => {
  const documented = annotateAll(endpoint, [[OpenApi.Summary, doc.summary], [OpenApi.Description, doc.description]])
  return doc.secret === true ? oneTimeSecret(documented) : documented
}
