/** Statements on the test PostgreSQL server's maintenance database (creating and dropping test databases). */
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"

/** `url` with its database replaced by `name`. */
export const withDatabase = (url: string, name: string) => {
  const u = new URL(url)
  u.pathname = `/${name}`
  return u.toString()
}

/** Runs one statement over a connection of its own, closed afterwards. */
export const adminStatement = (adminUrl: string, statement: string) =>
  Effect.scoped(Effect.flatMap(PgClient.make({ url: Redacted.make(adminUrl), maxConnections: 1 }), (sql) => sql.unsafe(statement))).pipe(
    Effect.provide(Reactivity.layer)
  )
