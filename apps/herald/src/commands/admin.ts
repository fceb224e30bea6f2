/**
 * `herald admin …`: operator commands. Each prints exactly one JSON object on
 * stdout (logs go to stderr), so scripts can pipe it into `jq`.
 */
import { Console, Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { Identity } from "@herald/server/identity/Identity"
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

export const admin = Command.make("admin").pipe(
  Command.withDescription("Operator commands (people, sessions)"),
  Command.withSubcommands([
    Command.make("user").pipe(Command.withDescription("People"), Command.withSubcommands([userCreate])),
    Command.make("session").pipe(Command.withDescription("Person API sessions"), Command.withSubcommands([sessionCreate]))
  ])
)
