/**
 * The identity capability's rules: people and their sessions, API tokens,
 * devices. No HTTP here; handlers in http.ts and appHttp.ts call these.
 */
import {
  ApiToken,
  ApiTokenList,
  Conflict,
  Device,
  NotFound,
  OauthClient,
  Person,
  SessionCreated,
  TokenCreated,
  TokenStatus,
  ValidationFailed
} from "@herald/api"
import type { AgentPrincipal, CreateTokenRequest, RegisterDeviceRequest, SandboxDelivery, Scope, TokensQuery } from "@herald/api"
import { Clock, Context, Duration, Effect, Layer, Option } from "effect"
import { Credentials } from "../auth/Credentials.ts"
import { displayPrefix, generateSecret, hashSecret } from "../auth/Secrets.ts"
import { TOKENS_LIST_LIMIT } from "../config/Limits.ts"
import { WebhookConfig } from "../config/WebhookConfig.ts"
import { ClientsRepo } from "../oauth/ClientsRepo.ts"
import { GrantsRepo } from "../oauth/GrantsRepo.ts"
import { OutboxRepo } from "../push/OutboxRepo.ts"
import { SandboxRepo } from "../push/SandboxRepo.ts"
import { normalizedKeys, subscriptionIssues } from "../push/WebPushSubscriptions.ts"
import { makeId } from "../lib/Ids.ts"
import { IdentityRepo, isUniqueViolation } from "./IdentityRepo.ts"
import type { TokenRow } from "./IdentityRepo.ts"

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/** The contract's record of a stored token, its OAuth client named from `clientNames` (none when it has no client). */
const apiToken = ({ oauthClientId, ...row }: TokenRow, clientNames: ReadonlyMap<string, string>): ApiToken => {
  const clientName = oauthClientId === null ? undefined : clientNames.get(oauthClientId)
  return new ApiToken({
    ...row,
    oauthClient: oauthClientId === null || clientName === undefined ? null : new OauthClient({ clientId: oauthClientId, name: clientName })
  })
}

const notFound = (what: string) => new NotFound({ error: `${what} not found.` })

export class Identity extends Context.Service<Identity, {
  readonly createUser: (input: { email: string; name: string }) => Effect.Effect<Person, ValidationFailed | Conflict>
  readonly createSession: (user: string) => Effect.Effect<SessionCreated, NotFound>
  readonly me: (userId: string) => Effect.Effect<Person, NotFound>
  /** The calling token, as it authenticated this request. */
  readonly tokenStatus: (agent: AgentPrincipal) => TokenStatus
  readonly createToken: (userId: string, input: CreateTokenRequest) => Effect.Effect<TokenCreated, ValidationFailed>
  readonly listTokens: (userId: string, query: TokensQuery) => Effect.Effect<ApiTokenList>
  readonly revokeToken: (userId: string, tokenId: string) => Effect.Effect<void, NotFound>
  readonly listDevices: (userId: string) => Effect.Effect<ReadonlyArray<Device>>
  readonly removeDevice: (userId: string, deviceId: string) => Effect.Effect<void, NotFound>
  readonly registerDevice: (userId: string, input: RegisterDeviceRequest) => Effect.Effect<Device, ValidationFailed>
  readonly renameDevice: (userId: string, deviceId: string, deviceName: string | null) => Effect.Effect<Device, NotFound>
  readonly setPushToStartToken: (userId: string, deviceId: string, token: string) => Effect.Effect<Device, NotFound>
  /** What the sandbox provider recorded for the person's own device, oldest first. */
  readonly sandboxDeliveries: (userId: string, deviceId: string) => Effect.Effect<ReadonlyArray<SandboxDelivery>, NotFound>
}>()("herald/Identity") {
  static readonly layerNoDeps = Layer.effect(Identity, Effect.gen(function*() {
    const repo = yield* IdentityRepo
    const credentials = yield* Credentials
    const grants = yield* GrantsRepo
    const clients = yield* ClientsRepo
    const outbox = yield* OutboxRepo
    const sandbox = yield* SandboxRepo
    // A browser's push endpoint is a user-supplied URL: the reply webhooks' address rules judge it.
    const { allowPrivateNetwork } = yield* WebhookConfig

    const createUser = Effect.fn("Identity.createUser")(function*(input: { email: string; name: string }) {
      // decisions.md: strings are trimmed of nothing.
      const { email, name } = input
      const issues = [
        ...(EMAIL.test(email) && email.length <= 254 ? [] : [{ path: "email", message: "Expected an email address" }]),
        ...(name.length > 0 && name.length <= 100 ? [] : [{ path: "name", message: "Expected 1 to 100 characters" }])
      ]
      if (issues.length > 0) return yield* new ValidationFailed({ error: "Invalid person.", issues })
      const id = yield* makeId("usr")
      return yield* repo.insertUser({ id, email, name }).pipe(
        Effect.catchTag("SqlError", (e) =>
          isUniqueViolation(e) ? Effect.fail(new Conflict({ error: `A person with email ${email} exists.` })) : Effect.die(e))
      )
    })

    const createSession = Effect.fn("Identity.createSession")(function*(user: string) {
      const person = yield* Effect.flatMap(repo.findUser(user), Option.match({
        onNone: () => Effect.fail(notFound(`Person ${user}`)),
        onSome: Effect.succeed
      }))
      const token = generateSecret("hls")
      yield* repo.insertSession({ id: yield* makeId("ses"), userId: person.id, tokenHash: hashSecret(token) })
      return new SessionCreated({ token, userId: person.id })
    })

    const me = Effect.fn("Identity.me")(function*(userId: string) {
      return yield* Effect.flatMap(repo.findUser(userId), Option.match({
        onNone: () => Effect.fail(notFound("Person")),
        onSome: Effect.succeed
      }))
    })

    // On every `GET /auth/status`: from the principal (the token as this
    // request authenticated it), so it needs no lookup and no cache hit. The
    // record is rebuilt only when the token's view changes (`lastUsedAt`
    // moves at most once a second; a token's other fields never change).
    const statusCache = new Map<string, { readonly lastUsedAt: string | null; readonly status: TokenStatus }>()
    const tokenStatus = (agent: AgentPrincipal): TokenStatus => {
      const cached = statusCache.get(agent.tokenId)
      if (cached !== undefined && cached.lastUsedAt === agent.tokenLastUsedAt) return cached.status
      const status = new TokenStatus({
        authenticated: true,
        userId: agent.userId,
        token: {
          id: agent.tokenId,
          name: agent.tokenName,
          prefix: agent.tokenPrefix,
          scopes: agent.scopes,
          createdAt: agent.tokenCreatedAt,
          lastUsedAt: agent.tokenLastUsedAt,
          expiresAt: agent.tokenExpiresAt
        }
      })
      // Bounded like the credential cache it mirrors.
      if (statusCache.size >= 10_000) statusCache.clear()
      statusCache.set(agent.tokenId, { lastUsedAt: agent.tokenLastUsedAt, status })
      return status
    }

    const createToken = Effect.fn("Identity.createToken")(function*(userId: string, input: CreateTokenRequest) {
      const now = yield* Clock.currentTimeMillis
      const expiresAt = input.expiresAt ?? null
      if (expiresAt !== null && Date.parse(expiresAt) <= now) {
        return yield* new ValidationFailed({
          error: "Invalid token.",
          issues: [{ path: "body.expiresAt", message: "Expected a time in the future" }]
        })
      }
      const secret = generateSecret("hld")
      const scopes = [...new Set<Scope>(input.scopes)]
      const row = yield* repo.insertToken({
        id: yield* makeId("tok"),
        userId,
        name: input.name,
        prefix: displayPrefix(secret),
        tokenHash: hashSecret(secret),
        scopes,
        expiresAt: expiresAt === null ? null : new Date(expiresAt).toISOString()
      })
      return new TokenCreated({ token: apiToken(row, new Map()), secret })
    })

    const revokeToken = Effect.fn("Identity.revokeToken")(function*(userId: string, tokenId: string) {
      const revoked = yield* repo.revokeToken(userId, tokenId)
      if (Option.isNone(revoked)) return yield* notFound("Token")
      credentials.evict(tokenId)
      // A revoked grant refuses its refresh tokens already (oauth/GrantsRepo.ts `findRefresh`); marked for the record.
      if (revoked.value.kind === "oauth") yield* grants.revokeRefreshOf(tokenId)
    })

    // A claim skips a queued push whose device is gone, so settling it second leaves no window in
    // which it could go; were settling to fail, the outbox's orphan sweep settles it later.
    const removeDevice = Effect.fn("Identity.removeDevice")(function*(userId: string, deviceId: string) {
      if (!(yield* repo.deleteDevice(userId, deviceId))) return yield* notFound("Device")
      yield* outbox.settleRemovedDevice(deviceId)
    })

    const registerDevice = Effect.fn("Identity.registerDevice")(function*(userId: string, input: RegisterDeviceRequest) {
      const id = yield* makeId("dev")
      if (input.platform === "web") {
        // The endpoint is judged without DNS here; every push resolves and judges it again.
        const policy = { allowPrivateNetwork, timeout: Duration.seconds(10), maxRedirects: 0 }
        const issues = yield* subscriptionIssues(policy, input.subscription)
        if (issues.length > 0) return yield* new ValidationFailed({ error: "The push subscription cannot be used.", issues })
        const keys = normalizedKeys(input.subscription)
        // A browser's endpoint names its subscription, as a push token names an app install.
        return yield* repo.upsertDevice({
          id,
          userId,
          platform: "web",
          deviceName: input.deviceName ?? null,
          pushToken: input.subscription.endpoint,
          liveActivitiesCapable: input.liveActivitiesCapable ?? false,
          interactiveLiveActivitiesCapable: false,
          liveActivityTokenEnvironment: null,
          webPushP256dh: keys.p256dh,
          webPushAuth: keys.auth
        })
      }
      return yield* repo.upsertDevice({
        id,
        userId,
        platform: input.platform,
        deviceName: input.deviceName ?? null,
        pushToken: input.pushToken,
        liveActivitiesCapable: input.liveActivitiesCapable ?? false,
        interactiveLiveActivitiesCapable: input.interactiveLiveActivitiesCapable ?? false,
        liveActivityTokenEnvironment: input.liveActivityTokenEnvironment ?? null,
        webPushP256dh: null,
        webPushAuth: null
      })
    })

    const renameDevice = Effect.fn("Identity.renameDevice")(
      function*(userId: string, deviceId: string, deviceName: string | null) {
        return yield* Effect.flatMap(repo.renameDevice(userId, deviceId, deviceName), Option.match({
          onNone: () => Effect.fail(notFound("Device")),
          onSome: Effect.succeed
        }))
      }
    )

    const setPushToStartToken = Effect.fn("Identity.setPushToStartToken")(
      function*(userId: string, deviceId: string, token: string) {
        return yield* Effect.flatMap(repo.setPushToStartToken(userId, deviceId, token), Option.match({
          onNone: () => Effect.fail(notFound("Device")),
          onSome: Effect.succeed
        }))
      }
    )

    const sandboxDeliveries = (userId: string, deviceId: string) =>
      Effect.flatMap(sandbox.listForUserDevice(userId, deviceId), Option.match({
        onNone: () => Effect.fail(notFound("Device")),
        onSome: Effect.succeed
      }))

    // One row past the page says whether another page follows.
    const listTokens = (userId: string, query: TokensQuery) => {
      const limit = query.limit ?? TOKENS_LIST_LIMIT.default
      return Effect.flatMap(repo.listTokens({ userId, cursor: query.cursor ?? null, limit: limit + 1 }), (rows) => {
        const page = rows.slice(0, limit)
        const clientIds = [...new Set(page.flatMap((row) => row.oauthClientId === null ? [] : [row.oauthClientId]))]
        return Effect.map(clients.names(clientIds), (names) =>
          new ApiTokenList({
            items: page.map((row) => apiToken(row, names)),
            nextCursor: rows.length > limit ? page[page.length - 1]!.id : null
          }))
      })
    }

    return Identity.of({
      createUser,
      createSession,
      me,
      tokenStatus,
      createToken,
      listTokens,
      revokeToken,
      listDevices: repo.listDevices,
      removeDevice,
      registerDevice,
      renameDevice,
      setPushToStartToken,
      sandboxDeliveries
    })
  })).pipe(
    // The other capabilities' repos it writes through (SQL only): its own to provide.
    Layer.provide([ClientsRepo.layer, GrantsRepo.layer, OutboxRepo.layer, SandboxRepo.layer])
  )

  static readonly layer = Identity.layerNoDeps.pipe(
    Layer.provide(WebhookConfig.layer),
    Layer.provideMerge(Credentials.layer),
    Layer.provideMerge(IdentityRepo.layer)
  )
}
