/** Records of the identity capability: tokens, devices, people and sessions. */
import { Schema } from "effect"
import { FreeObject, Timestamp } from "./Common.ts"
import { Scope } from "./Scope.ts"

/** The token object inside TokenStatus: the calling token, without its secret. */
export class TokenStatusToken extends Schema.Class<TokenStatusToken>("TokenStatusToken")({
  id: Schema.String,
  name: Schema.String,
  prefix: Schema.String,
  scopes: Schema.Array(Scope),
  createdAt: Timestamp,
  lastUsedAt: Schema.NullOr(Timestamp),
  expiresAt: Schema.NullOr(Timestamp)
}) {}

/** TokenStatus: the response of the auth status operation. */
export class TokenStatus extends Schema.Class<TokenStatus>("TokenStatus")({
  authenticated: Schema.Literal(true),
  userId: Schema.String,
  token: TokenStatusToken
}) {}

/** The connected remote-tool client behind an `oauth` token. */
export class OauthClient extends Schema.Class<OauthClient>("OauthClient")({
  clientId: Schema.String,
  name: Schema.String
}) {}

/** ApiToken `kind`: `oauth` is the grant behind a connected remote-tool client. */
export const TokenKind = Schema.Literals(["token", "oauth"])
export type TokenKind = typeof TokenKind.Type

/** ApiToken: an account's token; secrets are never returned, only the identifying `prefix`. */
export class ApiToken extends Schema.Class<ApiToken>("ApiToken")({
  id: Schema.String,
  name: Schema.String,
  prefix: Schema.String,
  scopes: Schema.Array(Scope),
  expiresAt: Schema.NullOr(Timestamp),
  lastUsedAt: Schema.NullOr(Timestamp),
  revokedAt: Schema.NullOr(Timestamp),
  createdAt: Timestamp,
  kind: Schema.optionalKey(TokenKind),
  oauthClient: Schema.optionalKey(Schema.NullOr(OauthClient))
}) {}

/** Device `platform`: a phone app (APNs, FCM) or a browser subscribed to Web Push. */
export const Platform = Schema.Literals(["ios", "android", "web"])
export type Platform = typeof Platform.Type

/** Device `liveActivityTokenEnvironment`: which APNs environment its live-activity tokens belong to. */
export const LiveActivityTokenEnvironment = Schema.Literals(["sandbox", "production"])
export type LiveActivityTokenEnvironment = typeof LiveActivityTokenEnvironment.Type

/** Device: a phone registered by the app, or a browser subscribed to Web Push; id `dev_…`. */
export class Device extends Schema.Class<Device>("Device")({
  id: Schema.String,
  platform: Platform,
  deviceName: Schema.NullOr(Schema.String),
  active: Schema.Boolean,
  liveActivitiesCapable: Schema.Boolean,
  liveActivityTokenEnvironment: Schema.NullOr(LiveActivityTokenEnvironment),
  liveActivityTokenUpdatedAt: Schema.NullOr(Timestamp),
  interactiveLiveActivitiesCapable: Schema.Boolean,
  createdAt: Timestamp,
  lastSeenAt: Timestamp
}) {}

/** The person a session belongs to (Person API `GET /me`). */
export class Person extends Schema.Class<Person>("Person")({
  id: Schema.String,
  email: Schema.String,
  name: Schema.String
}) {}

/** Answer of creating an API token: the record and its plaintext secret, shown once. */
export class TokenCreated extends Schema.Class<TokenCreated>("TokenCreated")({
  token: ApiToken,
  secret: Schema.String
}) {}

/** Answer of creating a Person API session (CLI). */
export class SessionCreated extends Schema.Class<SessionCreated>("SessionCreated")({
  token: Schema.String,
  userId: Schema.String
}) {}

/** The push types Herald sends (the APNs names; FCM messages are mapped onto them). */
export const PushType = Schema.Literals(["alert", "background", "liveactivity"])
export type PushType = typeof PushType.Type

/** Push transport priority: 10 is immediate, 5 is power-considerate. */
export const PushPriority = Schema.Literals([5, 10])
export type PushPriority = typeof PushPriority.Type

/** One push the sandbox provider recorded for a device (Person API, sandbox only). */
export class SandboxDelivery extends Schema.Class<SandboxDelivery>("SandboxDelivery")({
  id: Schema.String,
  pushType: PushType,
  priority: PushPriority,
  payload: FreeObject,
  createdAt: Timestamp
}) {}

/** What the sandbox provider sent a device, oldest first. */
export class SandboxDeliveries extends Schema.Class<SandboxDeliveries>("SandboxDeliveries")({
  items: Schema.Array(SandboxDelivery)
}) {}
