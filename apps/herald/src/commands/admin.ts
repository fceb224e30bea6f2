/**
 * `herald admin …`: operator commands. Each prints exactly one JSON object on
 * stdout (logs go to stderr), so scripts can pipe it into `jq`.
 */
import { Console, Effect, Layer, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { Identity } from "@herald/server/identity/Identity"
import { Signing } from "@herald/server/miniApps/Signing"
import { SignInLinks } from "@herald/server/oauth/SignInLinks"
import { operatorActor } from "@herald/server/teams/AuditTrail"
import { Teams } from "@herald/server/teams/Teams"
import { CliDatabase } from "./database.ts"

const printJson = (value: unknown) => Console.log(JSON.stringify(value))

const withIdentity = <A, E>(f: (identity: Identity["Service"]) => Effect.Effect<A, E>) =>
  Effect.flatMap(Identity, f).pipe(Effect.provide(Identity.layer), Effect.provide(CliDatabase))

const userCreate = Command.make("create", {
  email: Flag.String("email").pipe(Flag.withDescription("The person's email address (unique)")),
  name: Flag.String("name").pipe(Flag.withDescription("The person's display name"))
}, ({ email, name }) =>
  withIdentity((identity) => identity.createUser({ email, name })).pipe(
    Effect.flatMap((person) => printJson({ id: person.id, email: person.email, name: person.name }))
  )).pipe(Command.withDescription("Create a person; prints {\"id\",\"email\",\"name\"}"))

const sessionCreate = Command.make("create", {
  user: Flag.String("user").pipe(Flag.withDescription("The person's email address or id"))
}, ({ user }) =>
  withIdentity((identity) => identity.createSession(user)).pipe(
    Effect.flatMap((session) => printJson({ token: session.token, userId: session.userId }))
  )).pipe(Command.withDescription("Create a Person API session for a person; prints {\"token\",\"userId\"}"))

/** A one-time browser sign-in link (oauth/SignInLinks.ts), built on the public URL as the server computes it. */
const sessionLink = Command.make("link", {
  user: Flag.String("user").pipe(Flag.withDescription("The person's email address or id")),
  next: Flag.String("next").pipe(
    Flag.withDescription("Where the browser goes once signed in: an authorization request path (/oauth/authorize?…)"),
    Flag.optional
  )
}, ({ next, user }) =>
  Effect.flatMap(SignInLinks, (links) => links.create(user, Option.getOrUndefined(next))).pipe(
    Effect.flatMap((link) => printJson({ url: link.url, expiresAt: link.expiresAt, userId: link.userId })),
    Effect.provide(SignInLinks.layer),
    Effect.provide(Identity.layer),
    Effect.provide(CliDatabase)
  )).pipe(Command.withDescription(
    "Create a one-time sign-in link (15 minutes) that signs a browser in as the person, e.g. to approve an OAuth " +
      "client; prints {\"url\",\"expiresAt\",\"userId\"}"
  ))

/** Teams as the server builds them, with Identity to find the owner. */
const TeamsCli = Layer.mergeAll(Teams.layer, Identity.layer)

/** decisions.md: the API creates families only; an operator creates a workplace team (plan `team`). */
const teamCreate = Command.make("create", {
  name: Flag.String("name").pipe(Flag.withDescription("The team's name (1-100 characters)")),
  owner: Flag.String("owner").pipe(Flag.withDescription("The owner's email address or id"))
}, ({ name, owner }) =>
  Effect.gen(function*() {
    const trimmed = name.trim()
    if (trimmed.length === 0 || trimmed.length > 100) return yield* Effect.fail(new Error("--name must be 1-100 characters."))
    const person = yield* Effect.flatMap(Identity, (identity) => identity.me(owner))
    const team = yield* Effect.flatMap(Teams, (teams) => teams.createTeam(operatorActor, { name: trimmed, ownerId: person.id }))
    yield* printJson(team)
  }).pipe(Effect.provide(TeamsCli), Effect.provide(CliDatabase))).pipe(
    Command.withDescription("Create a workplace team (plan team) owned by a person; prints the Team as JSON")
  )

/** decisions.md: retires the current package signing key and makes a new one; old signatures stay verifiable. */
const keysRotate = Command.make("rotate", {}, () =>
  Effect.flatMap(Signing, (signing) => signing.rotate).pipe(
    Effect.flatMap(printJson),
    Effect.provide(Signing.layer),
    Effect.provide(CliDatabase)
  )).pipe(Command.withDescription(
    "Rotate the mini-app package signing key (Ed25519); prints the new key as JSON {keyId,algorithm,publicKey,createdAt,retiredAt}"
  ))

export const admin = Command.make("admin").pipe(
  Command.withDescription("Operator commands (people, sessions, teams, signing keys)"),
  Command.withSubcommands([
    Command.make("user").pipe(Command.withDescription("People"), Command.withSubcommands([userCreate])),
    Command.make("session").pipe(Command.withDescription("Person API sessions"), Command.withSubcommands([sessionCreate, sessionLink])),
    Command.make("team").pipe(Command.withDescription("Teams"), Command.withSubcommands([teamCreate])),
    Command.make("keys").pipe(Command.withDescription("Mini-app package signing keys"), Command.withSubcommands([keysRotate]))
  ])
)
