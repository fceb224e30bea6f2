/**
 * One walker for access tables: route × role × expected status, each cell on a freshly seeded
 * fixture (a cell may delete or leave what the next one needs), called over raw HTTP so the
 * statuses are the wire's; and each route's scopes, whose absence is 403 `MISSING_SCOPE`
 * naming the one missing. A test file holds only its table and how to seed it.
 */
import { assert } from "@effect/vitest"
import type { Vitest } from "@effect/vitest"
import type { Scope } from "@herald/api"
import { Effect } from "effect"
import { personClient, rawFetch } from "./server.ts"
import type { TestServer } from "./server.ts"
import type { Someone } from "./teams.ts"

export interface Answer {
  readonly status: number
  readonly body: unknown
}

export interface AccessRoute<Cell, Role extends string> {
  readonly name: string
  readonly method: string
  /** The path within the cell's fixture (and, where it differs, the caller's view of it). */
  readonly path: (cell: Cell, role: Role) => string
  /** A JSON body, or one made from the cell and the caller. */
  readonly body?: unknown
  /** `person` calls with the role's Person API session rather than an API token. */
  readonly face?: "agent" | "person"
  /** Each scope the route needs; a token lacking any one of them is refused. */
  readonly scopes?: ReadonlyArray<Scope>
  readonly expect: Readonly<Record<Role, number>>
}

export interface AccessTable<Cell, Role extends string, R> {
  readonly roles: ReadonlyArray<Role>
  readonly routes: ReadonlyArray<AccessRoute<Cell, Role>>
  /** Run once per test: what the cells share (people, tokens), and how to seed one fresh cell. */
  readonly seeder: Effect.Effect<(route: AccessRoute<Cell, Role>, role: Role) => Effect.Effect<Cell, never, R>, never, R>
  /** The bearer `role` calls `face` with in `cell`, holding every scope the table needs. */
  readonly bearer: (cell: Cell, role: Role, face: "agent" | "person") => Effect.Effect<string, never, R>
  /** A token of a caller allowed every route in `cell`, holding every scope of the table but `missing`. */
  readonly lacking?: (cell: Cell, missing: Scope) => Effect.Effect<string, never, R>
  /** The role whose cell the scope checks seed (the first role unless told). */
  readonly scopeRole?: Role
  /** What else a cell's answer must satisfy (a 404 exactly as for nothing, a 403's code): failures, described. */
  readonly check?: (answer: Answer, cell: Cell, route: AccessRoute<Cell, Role>, role: Role) => ReadonlyArray<string>
}

/** The secret of a new API token of `someone` with `scopes` (made through the Person API, as the phone app does). */
export const tokenOf = (someone: Someone, scopes: ReadonlyArray<Scope>) =>
  Effect.flatMap(personClient(someone.session), (app) => app.tokens.create({ payload: { name: "access table", scopes: [...scopes] } })).pipe(
    Effect.map((created) => created.secret),
    Effect.orDie
  )

const bodyOf = <Cell, Role extends string>(route: AccessRoute<Cell, Role>, cell: Cell, role: Role): unknown =>
  typeof route.body === "function" ? (route.body as (cell: Cell, role: Role) => unknown)(cell, role) : route.body

/** One call of `route` as `role` with `bearer`. */
export const callRoute = <Cell, Role extends string>(route: AccessRoute<Cell, Role>, cell: Cell, role: Role, bearer: string) => {
  const body = bodyOf(route, cell, role)
  return rawFetch(route.path(cell, role), {
    method: route.method,
    headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
}

const codeOf = (answer: Answer) => (answer.body as { code?: string } | null)?.code

/** Registers the table's two tests: every cell's status, and every route's scopes. */
export const accessTable = <Cell, Role extends string, R>(
  it: { readonly effect: Vitest.Test<R | TestServer> },
  table: AccessTable<Cell, Role, NoInfer<R | TestServer>>
) => {
  it.effect("every route × role answers the table's status", () =>
    Effect.gen(function*() {
      const seed = yield* table.seeder
      const wrong: Array<string> = []
      for (const route of table.routes) {
        for (const role of table.roles) {
          const cell = yield* seed(route, role)
          const answer = yield* callRoute(route, cell, role, yield* table.bearer(cell, role, route.face ?? "agent"))
          const at = `${route.name} as ${role}`
          if (answer.status !== route.expect[role]) {
            wrong.push(`${at}: ${answer.status} (expected ${route.expect[role]}) ${JSON.stringify(answer.body).slice(0, 300)}`)
          }
          for (const failure of table.check?.(answer, cell, route, role) ?? []) wrong.push(`${at}: ${failure}`)
        }
      }
      assert.deepStrictEqual(wrong, [])
    }))

  const lacking = table.lacking
  if (lacking === undefined) return
  it.effect("each route needs its scopes: without one, 403 MISSING_SCOPE naming it", () =>
    Effect.gen(function*() {
      const seed = yield* table.seeder
      const role = table.scopeRole ?? table.roles[0]!
      const wrong: Array<string> = []
      for (const route of table.routes) {
        for (const scope of route.scopes ?? []) {
          const cell = yield* seed(route, role)
          const answer = yield* callRoute(route, cell, role, yield* lacking(cell, scope))
          const required = (answer.body as { required?: ReadonlyArray<string> } | null)?.required ?? []
          if (answer.status !== 403 || codeOf(answer) !== "MISSING_SCOPE" || !required.includes(scope)) {
            wrong.push(`${route.name} without ${scope}: ${answer.status} ${JSON.stringify(answer.body)}`)
          }
        }
      }
      assert.deepStrictEqual(wrong, [])
    }))
}

/** The usual extra check: a 404 answers exactly as `nothing` (what a team or item that does not exist answers), a 403 is `FORBIDDEN`. */
export const concealed = (answer: Answer, nothing: unknown): ReadonlyArray<string> => [
  ...(answer.status === 404 && JSON.stringify(answer.body) !== JSON.stringify(nothing)
    ? [`404 unlike nothing there: ${JSON.stringify(answer.body)}`]
    : []),
  ...(answer.status === 403 && codeOf(answer) !== "FORBIDDEN" ? [`403 with code ${codeOf(answer)}`] : [])
]

/** The four roles around a team that most tables walk (test/support/teams.ts `seedRoles`). */
export type TeamRole = "owner" | "admin" | "member" | "outsider"
export const teamRoles: ReadonlyArray<TeamRole> = ["owner", "admin", "member", "outsider"]

/** Each role's token holding `scopes`. */
export const teamTokens = (people: Readonly<Record<TeamRole, Someone>>, scopes: ReadonlyArray<Scope>) =>
  Effect.gen(function*() {
    const secrets = {} as Record<TeamRole, string>
    for (const role of teamRoles) secrets[role] = yield* tokenOf(people[role], scopes)
    return secrets
  })

/** A cell whose roles call with tokens made once (`teamTokens`), the owner's standing in for the scope checks. */
export interface TeamCell {
  readonly owner: Someone
  readonly secrets: Readonly<Record<TeamRole, string>>
}

/** `accessTable` over the four team roles, each calling with its token of `scopes`; the scope checks use the owner's. */
export const teamAccessTable = <Cell extends TeamCell, R>(
  it: { readonly effect: Vitest.Test<R | TestServer> },
  scopes: ReadonlyArray<Scope>,
  table: Omit<AccessTable<Cell, TeamRole, NoInfer<R | TestServer>>, "roles" | "bearer" | "lacking">
) =>
  accessTable(it, {
    ...table,
    roles: teamRoles,
    bearer: (cell, role) => Effect.succeed(cell.secrets[role]),
    lacking: (cell, missing) => tokenOf(cell.owner, scopes.filter((s) => s !== missing))
  })
