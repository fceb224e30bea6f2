/**
 * What the `herald admin …` commands run (admin.ts holds their flags and help
 * and imports this module only when one runs), but `user create` and `session
 * create`: those are in adminPeople.ts, which loads Identity alone. Each prints
 * exactly one JSON object on stdout (logs go to stderr), so scripts can pipe it into `jq`.
 */
import { Effect, Layer } from "effect"
import { Identity } from "@herald/server/identity/Identity"
import { Signing } from "@herald/server/miniApps/Signing"
import { WebPushKeys } from "@herald/server/push/WebPushKeys"
import { OAuthClients } from "@herald/server/oauth/OAuthClients"
import { SignInLinks } from "@herald/server/oauth/SignInLinks"
import { operatorActor } from "@herald/server/teams/AuditTrail"
import { Teams } from "@herald/server/teams/Teams"
import { printJson } from "./adminPeople.ts"
import { CliDatabase } from "./database.ts"

/** A one-time browser sign-in link (oauth/SignInLinks.ts), built on the public URL as the server computes it. */
export const sessionLink = (user: string, next: string | undefined) =>
  Effect.flatMap(SignInLinks, (links) => links.create(user, next)).pipe(
    Effect.flatMap((link) => printJson({ url: link.url, expiresAt: link.expiresAt, userId: link.userId })),
    Effect.provide(SignInLinks.layer),
    Effect.provide(Identity.layer),
    Effect.provide(CliDatabase)
  )

/** Teams as the server builds them, with Identity to find the owner. */
const TeamsCli = Layer.mergeAll(Teams.layer, Identity.layer)

/** decisions.md: the API creates families only; an operator creates a workplace team (plan `team`). */
export const teamCreate = (name: string, owner: string) =>
  Effect.gen(function*() {
    const trimmed = name.trim()
    if (trimmed.length === 0 || trimmed.length > 100) return yield* Effect.fail(new Error("--name must be 1-100 characters."))
    const person = yield* Effect.flatMap(Identity, (identity) => identity.me(owner))
    const team = yield* Effect.flatMap(Teams, (teams) => teams.createTeam(operatorActor, { name: trimmed, ownerId: person.id }))
    yield* printJson(team)
  }).pipe(Effect.provide(TeamsCli), Effect.provide(CliDatabase))

/** decisions.md: retires the current package signing key and makes a new one; old signatures stay verifiable. */
export const keysRotate = Effect.flatMap(Signing, (signing) => signing.rotate).pipe(
  Effect.flatMap(printJson),
  Effect.provide(Signing.layer),
  Effect.provide(CliDatabase)
)

/**
 * Retires the VAPID key browsers subscribe with and makes a new one. Push services refuse pushes signed
 * with another key than a subscription's, so every browser device is marked inactive and must subscribe
 * again (the console does when it sees the new key).
 */
export const webPushRotate = Effect.flatMap(WebPushKeys, (keys) => keys.rotate).pipe(
  Effect.flatMap(({ deactivatedDevices, key }) =>
    printJson({
      ...key,
      deactivatedDevices,
      note: "Browsers subscribed with the old key no longer receive pushes: each must subscribe again " +
        "(open the console and enable notifications) to be registered with the new key."
    })
  ),
  Effect.provide(WebPushKeys.layer),
  Effect.provide(CliDatabase)
)

const withClients = <A, E>(f: (clients: OAuthClients["Service"]) => Effect.Effect<A, E>) =>
  Effect.flatMap(OAuthClients, f).pipe(Effect.provide(OAuthClients.layer), Effect.provide(CliDatabase))

/**
 * Registers a client as the operator (issue 30): the registration rules of `POST /oauth/register`, but no switch
 * or bound, and the client is trusted (error redirects) and never swept. A refusal is the RFC 7591 error.
 */
export const oauthClientCreate = (input: {
  readonly name: string
  readonly redirectUris: ReadonlyArray<string>
  readonly authMethod: string
  readonly scope: string | undefined
}) =>
  withClients((clients) =>
    clients.registerAsOperator({
      client_name: input.name,
      redirect_uris: input.redirectUris,
      token_endpoint_auth_method: input.authMethod,
      ...(input.scope === undefined ? {} : { scope: input.scope })
    }).pipe(Effect.mapError((e) => new Error(`${e.error}: ${e.error_description ?? ""}`)))
  ).pipe(
    Effect.flatMap((registered) => printJson({ ...registered, registered_by: "operator" }))
  )

export const oauthClientDelete = (id: string) =>
  withClients((clients) => clients.remove(id)).pipe(
    Effect.flatMap((deleted) => deleted ? printJson({ deleted: id }) : Effect.fail(new Error(`No OAuth client ${id}.`)))
  )
