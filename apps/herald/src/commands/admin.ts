/**
 * `herald admin …`: operator commands. Each prints exactly one JSON object on
 * stdout (logs go to stderr), so scripts can pipe it into `jq`. What they run
 * is in adminPeople.ts (people and sessions) and adminActions.ts (the rest),
 * loaded when one runs: `--help` and the other commands start without the
 * server's modules, and `user create` without the other commands' services.
 */
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"

type Actions = typeof import("./adminActions.ts")
type People = typeof import("./adminPeople.ts")

/** Runs a command of the module `load` loads now, with links built on the server's URL (database.ts). */
const runFrom = <M, A, E, R>(load: () => Promise<M>, f: (module: M) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(
    Effect.promise(() => Promise.all([load(), import("./database.ts")])),
    ([module, database]) => database.withServerUrl(f(module))
  )

/** One of adminActions.ts. */
const act = <A, E, R>(f: (run: Actions) => Effect.Effect<A, E, R>) => runFrom(() => import("./adminActions.ts"), f)

/** `user create` or `session create`: adminPeople.ts, Identity alone. */
const person = <A, E, R>(f: (run: People) => Effect.Effect<A, E, R>) => runFrom(() => import("./adminPeople.ts"), f)

const userCreate = Command.make("create", {
  email: Flag.String("email").pipe(Flag.withDescription("The person's email address (unique)")),
  name: Flag.String("name").pipe(Flag.withDescription("The person's display name"))
}, ({ email, name }) => person((run) => run.userCreate({ email, name }))).pipe(
  Command.withDescription("Create a person; prints {\"id\",\"email\",\"name\"}")
)

const sessionCreate = Command.make("create", {
  user: Flag.String("user").pipe(Flag.withDescription("The person's email address or id"))
}, ({ user }) => person((run) => run.sessionCreate(user))).pipe(
  Command.withDescription("Create a Person API session for a person; prints {\"token\",\"userId\"}")
)

const sessionLink = Command.make("link", {
  user: Flag.String("user").pipe(Flag.withDescription("The person's email address or id")),
  next: Flag.String("next").pipe(
    Flag.withDescription("Where the browser goes once signed in: an authorization request path (/oauth/authorize?…)"),
    Flag.optional
  )
}, ({ next, user }) => act((run) => run.sessionLink(user, Option.getOrUndefined(next)))).pipe(
  Command.withDescription(
    "Create a one-time sign-in link (15 minutes) that signs a browser in as the person, e.g. to approve an OAuth " +
      "client; prints {\"url\",\"expiresAt\",\"userId\"}"
  )
)

const teamCreate = Command.make("create", {
  name: Flag.String("name").pipe(Flag.withDescription("The team's name (1-100 characters)")),
  owner: Flag.String("owner").pipe(Flag.withDescription("The owner's email address or id"))
}, ({ name, owner }) => act((run) => run.teamCreate(name, owner))).pipe(
  Command.withDescription("Create a workplace team (plan team) owned by a person; prints the Team as JSON")
)

const keysRotate = Command.make("rotate", {}, () => act((run) => run.keysRotate)).pipe(
  Command.withDescription(
    "Rotate the mini-app package signing key (Ed25519); prints the new key as JSON {keyId,algorithm,publicKey,createdAt,retiredAt}"
  )
)

const webPushRotate = Command.make("rotate", {}, () => act((run) => run.webPushRotate)).pipe(
  Command.withDescription(
    "Rotate the Web Push (VAPID) key; every browser must subscribe again. Prints the new key as JSON " +
      "{keyId,publicKey,createdAt,retiredAt,deactivatedDevices,note}"
  )
)

const oauthClientCreate = Command.make("create", {
  name: Flag.String("name").pipe(Flag.withDescription("The client's name, shown on the consent page (1-100 characters)")),
  redirectUri: Flag.String("redirect-uri").pipe(
    Flag.between(1, 10),
    Flag.withDescription("A redirect URI, exactly as the client sends it (repeat for more; the registration rules apply)")
  ),
  authMethod: Flag.Literals("auth-method", ["none", "client_secret_basic", "client_secret_post"]).pipe(
    Flag.withDefault("client_secret_basic"),
    Flag.withDescription("How the client authenticates at the token endpoint: none (a public client) or with a client secret")
  ),
  scope: Flag.String("scope").pipe(Flag.withDescription("Space-separated scopes the client may ask for (all when absent)"), Flag.optional)
}, ({ authMethod, name, redirectUri, scope }) =>
  act((run) => run.oauthClientCreate({ name, redirectUris: redirectUri, authMethod, scope: Option.getOrUndefined(scope) }))).pipe(
  Command.withDescription(
    "Register an OAuth client as the operator (works when HERALD_OAUTH_REGISTRATION is closed); it is trusted and kept " +
      "until deleted. Prints the RFC 7591 registration response, with client_secret (shown once) unless --auth-method none"
  )
)

const oauthClientDelete = Command.make("delete", {
  id: Flag.String("id").pipe(Flag.withDescription("The client's id (ocl_…)"))
}, ({ id }) => act((run) => run.oauthClientDelete(id))).pipe(
  Command.withDescription("Delete an OAuth client and every grant of it (its tokens stop working); prints {\"deleted\"}")
)

export const admin = Command.make("admin").pipe(
  Command.withDescription("Operator commands (people, sessions, teams, signing keys, Web Push keys, OAuth clients)"),
  Command.withSubcommands([
    Command.make("user").pipe(Command.withDescription("People"), Command.withSubcommands([userCreate])),
    Command.make("session").pipe(Command.withDescription("Person API sessions"), Command.withSubcommands([sessionCreate, sessionLink])),
    Command.make("team").pipe(Command.withDescription("Teams"), Command.withSubcommands([teamCreate])),
    Command.make("keys").pipe(Command.withDescription("Mini-app package signing keys"), Command.withSubcommands([keysRotate])),
    Command.make("webpush").pipe(Command.withDescription("Web Push (VAPID) keys"), Command.withSubcommands([webPushRotate])),
    Command.make("oauth-client").pipe(
      Command.withDescription("OAuth clients of remote tools (MCP)"),
      Command.withSubcommands([oauthClientCreate, oauthClientDelete])
    )
  ])
)
