/**
 * Tunnel connectors (spec "Tunnel connectors"; bodies, online window, passes,
 * sessions and callbacks from decisions.md): a person's gateways that let them
 * reach their own services through Herald. The gateway calls `access` and
 * `callback-access` with its owner's token.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Ok, Timestamp } from "../domain/Common.ts"
import { connectorPathProblem } from "../domain/ConnectorPaths.ts"
import { CallbackInvalid, LimitReached, NotFound, PassInvalid } from "../errors.ts"
import { agentOperation } from "../Operation.ts"
import { OncallGroupId, UserId } from "../Params.ts"
import { IntParam } from "./History.ts"
import { AgentAuth } from "../Security.ts"

/** Connectors one person keeps at most (422 `LIMIT_REACHED` beyond it). */
export const CONNECTORS_MAX_PER_PERSON = 20
/** Routes one connector lists at most (400 `VALIDATION_FAILED` beyond it). */
export const CONNECTOR_MAX_ROUTES = 20
/** The longest `pathPrefix` of a route. */
export const CONNECTOR_MAX_PATH_PREFIX = 200
/** The longest `upstream` URL of a route. */
export const CONNECTOR_MAX_UPSTREAM = 2048
/** The longest connector name. */
export const CONNECTOR_MAX_NAME = 100

export const ConnectorId = Schema.String.check(Schema.isPattern(/^conn_[0-9A-Za-z]{1,64}$/)).annotate({
  identifier: "ConnectorId",
  description: "An id starting `conn_`."
})

export const ConnectorRoute = Schema.Struct({
  // The paths it covers are held to the connector path rule (domain/ConnectorPaths.ts); a prefix that breaks it
  // would cover only paths that are refused, or read as another place than it says.
  pathPrefix: Schema.String.check(
    Schema.isMaxLength(CONNECTOR_MAX_PATH_PREFIX),
    Schema.isPattern(/^\/[\x21-\x7e]*$/u),
    Schema.makeFilter((prefix: string) => connectorPathProblem(prefix) ?? true, {
      expected: "a path without dot segments, empty segments, backslashes or encoded separators"
    })
  ).annotate({
    description: `A path starting \`/\` of printable ASCII without spaces, at most ${CONNECTOR_MAX_PATH_PREFIX} characters, ` +
      "without `.` or `..` segments, empty segments, backslashes or encoded `/` (plain or percent-encoded)."
  }),
  upstream: Schema.String.check(
    Schema.isMaxLength(CONNECTOR_MAX_UPSTREAM),
    Schema.isPattern(/^https?:\/\/[^\s/?#]+[^\s]*$/u)
  ).annotate({ description: `The \`http://\` or \`https://\` URL the gateway forwards to, at most ${CONNECTOR_MAX_UPSTREAM} characters.` })
}).annotate({ identifier: "ConnectorRoute" })
export type ConnectorRoute = typeof ConnectorRoute.Type

const Routes = Schema.Array(ConnectorRoute).check(Schema.isMinLength(1), Schema.isMaxLength(CONNECTOR_MAX_ROUTES))
const ConnectorName = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(CONNECTOR_MAX_NAME))

/** A connector as every read shows it; the callback secret never appears here. */
export class Connector extends Schema.Class<Connector>("Connector")({
  id: Schema.String,
  name: Schema.String,
  routes: Schema.Array(ConnectorRoute),
  oncallGroupId: Schema.NullOr(Schema.String),
  /** True while the last heartbeat is under 90 s old (computed at read). */
  online: Schema.Boolean,
  lastSeenAt: Schema.NullOr(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  /** The heartbeat watch (docs/dead-mans-switch.md): the owner is alerted after this long without one; null: off. */
  alertAfterSeconds: Schema.optionalKey(Schema.NullOr(Schema.Int)),
  /** Set while the connector has missed its heartbeats and its owner was alerted; null otherwise. */
  silentSince: Schema.optionalKey(Schema.NullOr(Timestamp))
}) {}

/**
 * A connector's heartbeat watch: 60 (a minute) to 604,800 (a week) seconds without a heartbeat before its
 * owner is alerted; null: off.
 */
const AlertAfterSeconds = Schema.Int.check(Schema.isBetween({ minimum: 60, maximum: 604_800 }))

export class ConnectorList extends Schema.Class<ConnectorList>("ConnectorList")({
  items: Schema.Array(Connector)
}) {}

/** POST /connectors and rotate-secret: the callback HMAC secret, shown this once. */
export class ConnectorCreated extends Schema.Class<ConnectorCreated>("ConnectorCreated")({
  connector: Connector,
  callbackSecret: Schema.String
}) {}

/** Body of POST /connectors. */
export const CreateConnectorRequest = Schema.Struct({
  name: ConnectorName,
  routes: Routes,
  oncallGroupId: Schema.optionalKey(OncallGroupId),
  alertAfterSeconds: Schema.optionalKey(Schema.NullOr(AlertAfterSeconds))
}).annotate({ identifier: "CreateConnectorRequest" })
export type CreateConnectorRequest = typeof CreateConnectorRequest.Type

/** Body of PATCH /connectors/{id}: a field given replaces it; `oncallGroupId: null` clears the link. */
export const UpdateConnectorRequest = Schema.Struct({
  name: Schema.optionalKey(ConnectorName),
  routes: Schema.optionalKey(Routes),
  oncallGroupId: Schema.optionalKey(Schema.NullOr(OncallGroupId)),
  alertAfterSeconds: Schema.optionalKey(Schema.NullOr(AlertAfterSeconds))
}).annotate({ identifier: "UpdateConnectorRequest" })
export type UpdateConnectorRequest = typeof UpdateConnectorRequest.Type

const Credential = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200))

/** Body of POST /connectors/{id}/access: a one-time pass, or the session one opened. */
export const ConnectorAccessRequest = Schema.Union([
  Schema.Struct({ pass: Credential }),
  Schema.Struct({ session: Credential })
]).annotate({ identifier: "ConnectorAccessRequest" })
export type ConnectorAccessRequest = typeof ConnectorAccessRequest.Type

export class ConnectorAccess extends Schema.Class<ConnectorAccess>("ConnectorAccess")({
  session: Schema.String,
  userId: UserId,
  expiresAt: Timestamp
}) {}

/** Body of POST /connectors/{id}/callback-access. */
export const CallbackAccessRequest = Schema.Struct({
  deliveryId: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100)),
  timestamp: Schema.Int.annotate({ description: "Unix seconds." }),
  signature: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200)),
  bodySha256: Schema.String.check(Schema.isPattern(/^[0-9a-f]{64}$/u)).annotate({
    description: "Lowercase hex SHA-256 of the delivery's body."
  })
}).annotate({ identifier: "CallbackAccessRequest" })
export type CallbackAccessRequest = typeof CallbackAccessRequest.Type

export class CallbackAccess extends Schema.Class<CallbackAccess>("CallbackAccess")({
  path: Schema.String
}) {}

/** Pending deliveries a gateway reads at most per call. */
export const CONNECTOR_DELIVERIES_MAX = 100

export const ConnectorDeliveriesQuery = Schema.Struct({
  limit: Schema.optionalKey(IntParam(1, CONNECTOR_DELIVERIES_MAX))
}).annotate({ identifier: "ConnectorDeliveriesQuery" })

/** A reply-webhook delivery recorded for a connector route and not yet authorized through `callback-access`. */
export class ConnectorDelivery extends Schema.Class<ConnectorDelivery>("ConnectorDelivery")({
  deliveryId: Schema.String,
  /** The destination path under the connector's routes (`callback-access` answers it again once authorized). */
  path: Schema.String,
  /** The JSON body, exactly as signed: forward these bytes unchanged. */
  body: Schema.String,
  /** Lowercase hex SHA-256 of `body`'s UTF-8 bytes: the `bodySha256` of `callback-access`. */
  bodySha256: Schema.String,
  /**
   * The request headers a reply webhook sends: its own configured headers, `content-type`, and the Standard
   * Webhooks signature (`webhook-id`, `webhook-timestamp`, `webhook-signature`) under the reply webhook's signing
   * secret, made at this read. Without the signature headers when the reply webhook has been deleted.
   */
  headers: Schema.Record(Schema.String, Schema.String),
  recordedAt: Timestamp
}) {}

export class ConnectorDeliveryList extends Schema.Class<ConnectorDeliveryList>("ConnectorDeliveryList")({
  items: Schema.Array(ConnectorDelivery)
}) {}

const concealment = "Another account's connector answers 404, as one that does not exist."
const groupRule = "`oncallGroupId` must name an on-call group of a team or family the caller belongs to (else 404 " +
  "`On-call group not found.`); its team's members may then ask the Person API for passes to this connector."
const routesRule = `\`routes\` lists 1-${CONNECTOR_MAX_ROUTES} \`{pathPrefix, upstream}\`; \`name\` 1-${CONNECTOR_MAX_NAME} characters.`
const online = "`online` is true while the last heartbeat is under 90 s old, computed when read."
const secretRule = "The callback HMAC secret (`hcb_…`) is in this answer only: Herald keeps it encrypted and never " +
  "shows it again."
const id = { id: ConnectorId }
const watchRule = "`alertAfterSeconds` (60-604,800; null or absent: off, on update absent keeps it) is the " +
  "connector's dead-man's switch (docs/dead-mans-switch.md): after that long without a heartbeat — counted from the " +
  "last one, or from when it was set — the owner gets one push (priority `high`), none more while it stays silent, " +
  "and one \"back online\" at the next heartbeat. Setting it restarts it. The record shows it with `silentSince`."

export class ConnectorsGroup extends HttpApiGroup.make("connectors")
  .add(
    HttpApiEndpoint.get("list", "/connectors", { success: ConnectorList })
      .pipe(agentOperation({ summary: "List connectors", description: `The caller's connectors, newest first. ${online}`, scopes: ["connectors:read"] })),
    HttpApiEndpoint.post("create", "/connectors", {
      payload: CreateConnectorRequest,
      success: ConnectorCreated.pipe(HttpApiSchema.status(201)),
      error: [NotFound, LimitReached]
    }).pipe(agentOperation({
      summary: "Register a connector",
      description: `Registers a tunnel connector. ${routesRule} ${groupRule} ${secretRule} A person keeps at most ` +
        `${CONNECTORS_MAX_PER_PERSON} connectors (422 \`LIMIT_REACHED\`). ${watchRule}`,
      scopes: ["connectors:write"],
      secret: true
    })),
    HttpApiEndpoint.get("get", "/connectors/:id", { params: id, success: Connector, error: NotFound })
      .pipe(agentOperation({ summary: "Read a connector", description: `${online} ${concealment}`, scopes: ["connectors:read"] })),
    HttpApiEndpoint.patch("update", "/connectors/:id", { params: id, payload: UpdateConnectorRequest, success: Connector, error: NotFound })
      .pipe(agentOperation({
        summary: "Update a connector",
        description: `Updates name, routes, on-call group or heartbeat watch; an absent field is kept. ${routesRule} ${groupRule} ` +
          `${watchRule} ${concealment}`,
        scopes: ["connectors:write"]
      })),
    HttpApiEndpoint.delete("remove", "/connectors/:id", { params: id, success: Ok, error: NotFound })
      .pipe(agentOperation({
        summary: "Remove a connector",
        description: `Removes the connector with its passes, sessions and recorded callbacks: a session it opened then ` +
          `answers 401 \`PASS_INVALID\`. ${concealment}`,
        scopes: ["connectors:write"]
      })),
    HttpApiEndpoint.post("heartbeat", "/connectors/:id/heartbeat", { params: id, success: Connector, error: NotFound })
      .pipe(agentOperation({
        summary: "Heartbeat",
        description: `Marks the connector online and refreshes its last-seen time; a connector whose owner was told it ` +
          `went silent is announced back online. ${online} ${concealment}`,
        scopes: ["connectors:write"]
      })),
    HttpApiEndpoint.post("access", "/connectors/:id/access", {
      params: id,
      payload: ConnectorAccessRequest,
      success: ConnectorAccess,
      error: PassInvalid
    }).pipe(agentOperation({
      summary: "Gateway: consume a pass or revalidate a session",
      description: "Called by the gateway with its owner's token. `{pass}` consumes a one-time pass (60 s, issued by " +
        "`POST /api/app/connectors/{id}/passes`) and opens a session of 12 h bound to this connector and the pass's " +
        "person; `{session}` revalidates that session and answers it unchanged — call it on every request. A used, " +
        "expired or unknown pass, a pass or session of another connector, an expired session, a removed connector, " +
        "or a person no longer allowed to use the connector (the owner, or a member of the team of its on-call " +
        "group): 401 `PASS_INVALID`. A connector that is not the caller's answers the same 401 as a removed one.",
      scopes: ["connectors:write"],
      secret: true
    })),
    HttpApiEndpoint.post("callbackAccess", "/connectors/:id/callback-access", {
      params: id,
      payload: CallbackAccessRequest,
      success: CallbackAccess,
      error: [NotFound, CallbackInvalid]
    }).pipe(agentOperation({
      summary: "Gateway: authorize a recorded callback",
      description: "Authorizes one reply-webhook delivery recorded for this connector (a reply webhook whose `url` is " +
        "`connector://{connectorId}{path}`) and answers its saved destination `path`. `signature` is the base64 " +
        "HMAC-SHA256 of `{deliveryId}.{timestamp}.{bodySha256}` keyed with the callback secret's UTF-8 bytes; " +
        "`timestamp` (Unix seconds) must be within 5 minutes of Herald's clock; `bodySha256` must be the hex SHA-256 " +
        "of the delivery's body; each delivery id is authorized once. Any of these failing: 401 `CALLBACK_INVALID`. " +
        concealment,
      scopes: ["connectors:write"]
    })),
    HttpApiEndpoint.get("deliveries", "/connectors/:id/deliveries", {
      params: id,
      query: ConnectorDeliveriesQuery,
      success: ConnectorDeliveryList,
      error: NotFound
    }).pipe(agentOperation({
      summary: "Gateway: read pending callback deliveries",
      description: "The reply-webhook deliveries recorded for this connector's routes and not yet authorized " +
        `through \`callback-access\`, oldest first, at most \`limit\` (1-${CONNECTOR_DELIVERIES_MAX}, default 50). Each ` +
        "carries what the gateway needs to verify and forward it: `body` (the exact bytes to forward), `bodySha256`, " +
        "`path`, and `headers` — the reply webhook's configured headers, `content-type: application/json` and the " +
        "Standard Webhooks signature headers under the reply webhook's signing secret, made at this read (the " +
        "upstream verifies them as for any reply webhook). To deliver one: check that the hex SHA-256 of `body` is " +
        "`bodySha256`, sign `{deliveryId}.{timestamp}.{bodySha256}` with the callback secret, call " +
        "`callback-access` (which marks it used and answers its `path`), then POST `body` with `headers` to the route's " +
        "upstream. A delivery authorized once no longer appears. Called with the owner's token, like `access`. " +
        concealment,
      scopes: ["connectors:write"]
    })),
    HttpApiEndpoint.post("rotateSecret", "/connectors/:id/rotate-secret", { params: id, success: ConnectorCreated, error: NotFound })
      .pipe(agentOperation({
        summary: "Rotate the callback secret",
        description: `Replaces the callback HMAC secret; the old one stops working at once. ${secretRule} ${concealment}`,
        scopes: ["connectors:write"],
        secret: true
      }))
  )
  .middleware(AgentAuth)
{}
