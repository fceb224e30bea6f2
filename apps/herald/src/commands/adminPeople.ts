/**
 * `herald admin user create` and `herald admin session create` (admin.ts holds
 * their flags and help): Identity alone, so the commands tests and operators
 * run most load none of the other admin commands' services (adminActions.ts).
 * Each prints exactly one JSON object on stdout (logs go to stderr).
 */
import { Console, Effect } from "effect"
import { Identity } from "@herald/server/identity/Identity"
import { CliDatabase } from "./database.ts"

/** One JSON object on stdout: what every `herald admin` command prints. */
export const printJson = (value: unknown) => Console.log(JSON.stringify(value))

const withIdentity = <A, E>(f: (identity: Identity["Service"]) => Effect.Effect<A, E>) =>
  Effect.flatMap(Identity, f).pipe(Effect.provide(Identity.layer), Effect.provide(CliDatabase))

export const userCreate = (input: { readonly email: string; readonly name: string }) =>
  withIdentity((identity) => identity.createUser(input)).pipe(
    Effect.flatMap((person) => printJson({ id: person.id, email: person.email, name: person.name }))
  )

export const sessionCreate = (user: string) =>
  withIdentity((identity) => identity.createSession(user)).pipe(
    Effect.flatMap((session) => printJson({ token: session.token, userId: session.userId }))
  )
