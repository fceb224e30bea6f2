/**
 * `herald admin …`: operator commands. Each prints exactly one JSON object on
 * stdout (logs go to stderr), so scripts can pipe it into `jq`. What they run
 * is in adminActions.ts, loaded when one runs: `--help` and the other commands
 * start without the server's modules.
 */
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"

const actions = Effect.promise(() => import("./adminActions.ts"))

const userCreate = Command.make("create", {
  email: Flag.String("email").pipe(Flag.withDescription("The person's email address (unique)")),
  name: Flag.String("name").pipe(Flag.withDescription("The person's display name"))
}, ({ email, name }) => Effect.flatMap(actions, (run) => run.userCreate({ email, name }))).pipe(
  Command.withDescription("Create a person; prints {\"id\",\"email\",\"name\"}")
)

const sessionCreate = Command.make("create", {
  user: Flag.String("user").pipe(Flag.withDescription("The person's email address or id"))
}, ({ user }) => Effect.flatMap(actions, (run) => run.sessionCreate(user))).pipe(
  Command.withDescription("Create a Person API session for a person; prints {\"token\",\"userId\"}")
)

const sessionLink = Command.make("link", {
  user: Flag.String("user").pipe(Flag.withDescription("The person's email address or id")),
  next: Flag.String("next").pipe(
    Flag.withDescription("Where the browser goes once signed in: an authorization request path (/oauth/authorize?…)"),
    Flag.optional
  )
}, ({ next, user }) => Effect.flatMap(actions, (run) => run.sessionLink(user, Option.getOrUndefined(next)))).pipe(
  Command.withDescription(
    "Create a one-time sign-in link (15 minutes) that signs a browser in as the person, e.g. to approve an OAuth " +
      "client; prints {\"url\",\"expiresAt\",\"userId\"}"
  )
)

const teamCreate = Command.make("create", {
  name: Flag.String("name").pipe(Flag.withDescription("The team's name (1-100 characters)")),
  owner: Flag.String("owner").pipe(Flag.withDescription("The owner's email address or id"))
}, ({ name, owner }) => Effect.flatMap(actions, (run) => run.teamCreate(name, owner))).pipe(
  Command.withDescription("Create a workplace team (plan team) owned by a person; prints the Team as JSON")
)

const keysRotate = Command.make("rotate", {}, () => Effect.flatMap(actions, (run) => run.keysRotate)).pipe(
  Command.withDescription(
    "Rotate the mini-app package signing key (Ed25519); prints the new key as JSON {keyId,algorithm,publicKey,createdAt,retiredAt}"
  )
)

export const admin = Command.make("admin").pipe(
  Command.withDescription("Operator commands (people, sessions, teams, signing keys)"),
  Command.withSubcommands([
    Command.make("user").pipe(Command.withDescription("People"), Command.withSubcommands([userCreate])),
    Command.make("session").pipe(Command.withDescription("Person API sessions"), Command.withSubcommands([sessionCreate, sessionLink])),
    Command.make("team").pipe(Command.withDescription("Teams"), Command.withSubcommands([teamCreate])),
    Command.make("keys").pipe(Command.withDescription("Mini-app package signing keys"), Command.withSubcommands([keysRotate]))
  ])
)
