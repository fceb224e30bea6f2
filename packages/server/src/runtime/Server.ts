/**
 * The layer graph of `herald serve`: config → logging → database → the
 * platform (runtime/Platform.ts: migrations and the shared infrastructure) →
 * the capabilities, one layer per folder (`<folder>/layer.ts`) → both APIs,
 * docs and operator routes → the Node HTTP server, and the workers beside it.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { AgentApi, AppApi, HooksApi, OAuthApi } from "@herald/api"
import { Effect, Layer, Option } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { createServer } from "node:http"
import { AgentAuthLive } from "../auth/AgentAuthLive.ts"
import { PersonAuthLive } from "../auth/PersonAuthLive.ts"
import { PersonPasskeysHandlers, PersonSessionsHandlers, SignInHandlers } from "../auth/http.ts"
import { SignInLayer } from "../auth/layer.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { MetricsConfig } from "../config/MetricsConfig.ts"
import { describeTarget, serverDatabaseLayer } from "../db/Database.ts"
import { answerClientErrors } from "../http/ClientErrors.ts"
import { DocsPages } from "../http/DocsHeaders.ts"
import { AddressThrottleMiddleware } from "../http/AddressThrottle.ts"
import { EdgeMiddleware } from "../http/Edge.ts"
import { OpsRoutes } from "../http/Ops.ts"
import { ConsoleRoutes } from "../console/ConsoleRoutes.ts"
import { routerConfig } from "../http/Routes.ts"
import { RequestErrorsLive } from "../http/RequestErrors.ts"
import { MeHandlers, PersonDevicesHandlers, PersonTokensHandlers } from "../identity/appHttp.ts"
import { AuthHandlers, DevicesHandlers, TokensHandlers } from "../identity/http.ts"
import { InboxHandlers } from "../inbox/http.ts"
import { PersonInboxHandlers } from "../inbox/appHttp.ts"
import { InboxStream } from "../inbox/InboxStream.ts"
import { PersonTeamsHandlers } from "../teams/appHttp.ts"
import { PersonOncallHandlers } from "../oncall/oncallAppHttp.ts"
import { PersonMiniAppsHandlers } from "../miniApps/appHttp.ts"
import { NotificationsHandlers } from "../notifications/http.ts"
import { BillingHandlers } from "../billing/http.ts"
import { ErrorLoggingLayer } from "../observability/ErrorLogging.ts"
import { MetricsListener, MetricsListenerLayer } from "./MetricsListener.ts"
import { closePromptly } from "./PromptClose.ts"
import { WorkersLayer } from "./Workers.ts"
import { loggingLayer } from "../observability/Logging.ts"
import { BackgroundTraceLevel, OtlpLayer } from "../observability/Otlp.ts"
import { PushGateway } from "../push/PushGateway.ts"
import { InboundHandlers } from "../services/hooksHttp.ts"
import { HistoryHandlers, ServicesHandlers } from "../services/http.ts"
import { ActivitiesHandlers, PersonActivitiesHandlers } from "../activities/http.ts"
import { PersonInteractionsHandlers, InteractionsHandlers } from "../interactions/http.ts"
import { PersonRemindersHandlers } from "../interactions/remindersHttp.ts"
import { PersonAppsHandlers } from "../apps/appHttp.ts"
import { AppsHandlers } from "../apps/http.ts"
import { AuditHandlers } from "../teams/auditHttp.ts"
import { DeviceGroupsHandlers } from "../teams/deviceGroupsHttp.ts"
import { TeamsHandlers } from "../teams/http.ts"
import { PersonInvitesHandlers, TeamInvitesHandlers } from "../teams/invitesHttp.ts"
import { TeamDomainHandlers } from "../teams/domainHttp.ts"
import { WebhooksHandlers } from "../webhooks/http.ts"
import { PersonPagesHandlers } from "../oncall/pagesAppHttp.ts"
import { PagesHandlers } from "../oncall/pagesHttp.ts"
import { OncallGroupsHandlers } from "../oncall/groupsHttp.ts"
import { MiniAppsHandlers } from "../miniApps/http.ts"
import { MiniAppReviewHandlers } from "../miniApps/reviewHttp.ts"
import { PersonConnectorsHandlers } from "../connectors/appHttp.ts"
import { ConnectorsHandlers } from "../connectors/http.ts"
import { ConnectorsLayer } from "../connectors/layer.ts"
import { McpRoutes } from "../mcp/McpRoutes.ts"
import {
  OAuthAuthorizeHandlers,
  OAuthClientsHandlers,
  OAuthMetadataHandlers,
  OAuthRequestErrorsLive,
  OAuthTokensHandlers
} from "../oauth/http.ts"
import { OAuthLayer } from "../oauth/layer.ts"
import { OAuthSignInHandlers } from "../oauth/signInHttp.ts"
import { PersonQuietHoursHandlers } from "../quiet/appHttp.ts"
import { QuietLayer } from "../quiet/layer.ts"
import { AnswerRoutes } from "../email/AnswerPage.ts"
import { PersonEmailChannelHandlers } from "../email/appHttp.ts"
import { activityMetrics } from "../activities/layer.ts"
import { AppsLayer } from "../apps/layer.ts"
import { BillingLayer } from "../billing/layer.ts"
import { IdempotencyLayer } from "../idempotency/layer.ts"
import { InboxLayer } from "../inbox/layer.ts"
import { PromptsLayer } from "../interactions/layer.ts"
import { McpLayer } from "../mcp/layer.ts"
import { MiniAppsLayer } from "../miniApps/layer.ts"
import { NotificationsLayer } from "../notifications/layer.ts"
import { registerAtZero } from "../observability/MetricsAtZero.ts"
import { ServicesLayer } from "../services/layer.ts"
import { TeamsLayer } from "../teams/layer.ts"
import { WatchLayer } from "../watch/layer.ts"
import { PlatformLayer, platformMetrics } from "./Platform.ts"

const AgentRoutes = HttpApiBuilder.layer(AgentApi, { openapiPath: "/api/agent/openapi.json" }).pipe(
  Layer.provide([AuthHandlers, TokensHandlers, DevicesHandlers, NotificationsHandlers, InboxHandlers, BillingHandlers]),
  Layer.provide([ServicesHandlers, HistoryHandlers, InteractionsHandlers, WebhooksHandlers, ActivitiesHandlers]),
  Layer.provide([TeamsHandlers, TeamInvitesHandlers, DeviceGroupsHandlers, TeamDomainHandlers, AuditHandlers, AppsHandlers]),
  Layer.provide([PagesHandlers, OncallGroupsHandlers]),
  Layer.provide([MiniAppsHandlers, MiniAppReviewHandlers, ConnectorsHandlers])
)

const AppRoutes = HttpApiBuilder.layer(AppApi, { openapiPath: "/api/app/openapi.json" }).pipe(
  Layer.provide([MeHandlers, PersonTokensHandlers, PersonDevicesHandlers, PersonInteractionsHandlers, PersonActivitiesHandlers]),
  Layer.provide([PersonInvitesHandlers, PersonAppsHandlers, PersonPagesHandlers, PersonConnectorsHandlers]),
  // The console's reads (issue 32): inbox and its live stream, teams, on-call, mini-app install pages.
  Layer.provide([PersonInboxHandlers, PersonTeamsHandlers, PersonOncallHandlers, PersonMiniAppsHandlers]),
  Layer.provide([SignInHandlers, PersonPasskeysHandlers, PersonSessionsHandlers]),
  Layer.provide(PersonQuietHoursHandlers),
  Layer.provide(PersonRemindersHandlers),
  Layer.provide(PersonEmailChannelHandlers)
)

const HooksRoutes = HttpApiBuilder.layer(HooksApi, { openapiPath: "/hooks/openapi.json" }).pipe(
  Layer.provide(InboundHandlers)
)

/** Herald as an OAuth 2.1 authorization server (oauth/): discovery, registration, consent, tokens, sign-in links. */
const OAuthRoutes = HttpApiBuilder.layer(OAuthApi, { openapiPath: "/oauth/openapi.json" }).pipe(
  Layer.provide([OAuthMetadataHandlers, OAuthClientsHandlers, OAuthAuthorizeHandlers, OAuthTokensHandlers, OAuthSignInHandlers]),
  Layer.provide(OAuthRequestErrorsLive)
)

/** The docs pages, their Content-Security-Policy, and `nosniff` on every response (http/DocsHeaders.ts). */
const DocsRoutes = DocsPages

/**
 * Every capability, each one layer of its folder (`<folder>/layer.ts`) needing only the platform
 * (runtime/Platform.ts), merged side by side on it: what the routes, the workers and the tests read.
 * Each layer appears once in the graph: prompts carry live activities, reply webhooks and e-mail,
 * watch carries on-call (docs/architecture.md, "Conventions").
 */
export const CapabilitiesLayer = Layer.mergeAll(
  NotificationsLayer,
  ServicesLayer,
  PromptsLayer,
  InboxLayer,
  IdempotencyLayer,
  BillingLayer,
  TeamsLayer,
  AppsLayer,
  WatchLayer,
  MiniAppsLayer,
  ConnectorsLayer,
  SignInLayer,
  OAuthLayer,
  McpLayer,
  QuietLayer
).pipe(Layer.provideMerge(PlatformLayer))

/** The metrics a scrape lists from the start, each capability's declared list (observability/MetricsAtZero.ts). */
const MetricsAtZeroLayer = registerAtZero([...platformMetrics, ...activityMetrics])

/**
 * The edge, wrapped by the per-address limits: a global middleware added first
 * is the outer one, so the limits' middleware is built before the edge's and
 * refuses before the edge reads a body (http/AddressThrottle.ts).
 */
const EdgeLayer = EdgeMiddleware.pipe(Layer.provide(AddressThrottleMiddleware))

/** All routes of the service (the person's console among them: console/), with their middleware, needing only a migrated database and its capabilities. */
export const RoutesLayer = Layer.mergeAll(AgentRoutes, AppRoutes, HooksRoutes, OAuthRoutes, McpRoutes, DocsRoutes, OpsRoutes, ConsoleRoutes, AnswerRoutes, MetricsAtZeroLayer, EdgeLayer).pipe(
  Layer.provide([AgentAuthLive, PersonAuthLive, RequestErrorsLive])
)

/** The HTTP server on a given port, for `serve` and in-process tests; paths match case-sensitively (http/Routes.ts). */
export const httpServerLayer = (options: { readonly port: number; readonly host: string }) =>
  HttpRouter.serve(RoutesLayer, { disableLogger: true, disableListenLog: true, routerConfig }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(() => closePromptly(answerClientErrors(createServer({ keepAliveTimeout: 65_000 }))), options)),
    Layer.provide(ErrorLoggingLayer)
  )

/**
 * Open inbox streams (inbox/InboxStream.ts) end as shutdown begins: built after the HTTP server, this is
 * released before it, so the server's graceful close does not wait out the streams' connections.
 */
const StreamsEndAtShutdown = Layer.effectDiscard(Effect.gen(function*() {
  yield* HttpServer.HttpServer
  const live = yield* InboxStream
  yield* Effect.addFinalizer(() => live.endAll)
}))

/**
 * The running service on a given port: the HTTP server, the metrics listener
 * when a metrics port is set (`MetricsListener.ts`) and, beside them, every
 * worker (`Workers.ts`). The only place workers are composed, for `serve` and
 * in-process tests alike; CLI commands build capabilities without it.
 */
export const serviceLayer = (options: { readonly port: number; readonly host: string }) =>
  Layer.mergeAll(
    StreamsEndAtShutdown.pipe(Layer.provideMerge(httpServerLayer(options))),
    MetricsListenerLayer,
    // Their passes poll several times a second: traced, not exported (observability/Otlp.ts).
    WorkersLayer.pipe(Layer.provide(BackgroundTraceLevel))
  )

const announce = Effect.gen(function*() {
  const config = yield* AppConfig
  const server = yield* HttpServer.HttpServer
  const push = yield* PushGateway
  const address = HttpServer.formatAddress(server.address)
  const metrics = yield* MetricsListener
  const metricsConfig = yield* MetricsConfig
  yield* Effect.logInfo(
    `herald listening on ${address} · database: ${describeTarget(config).description} · push: ${push.providers.join(", ")} · docs: ${config.publicUrl}/api/agent/docs` +
      ` · metrics: ${Option.match(metrics.address, { onNone: () => address, onSome: HttpServer.formatAddress })}/metrics`
  )
  // docs/operations.md#metrics: a scrape open to anyone on a non-loopback interface is worth a word at start.
  if (Option.isNone(metrics.address) && Option.isNone(metricsConfig.token) && !isLoopback(config.host)) {
    yield* Effect.logWarning(
      `/metrics is served on ${address} to anyone: set HERALD_METRICS_PORT (a private listener) or HERALD_METRICS_TOKEN (a bearer)`
    )
  }
})

const isLoopback = (host: string) => host === "localhost" || host === "::1" || host.startsWith("127.")

/** `herald serve`: the whole service, from the environment. */
export const ServeLayer = Layer.unwrap(Effect.gen(function*() {
  const config = yield* AppConfig
  return Layer.effectDiscard(announce).pipe(
    Layer.provideMerge(serviceLayer({ port: config.port, host: config.host })),
    Layer.provideMerge(CapabilitiesLayer),
    Layer.provideMerge(serverDatabaseLayer),
    // Beneath everything, so every fiber traces to it; logged through the logger below (observability/Otlp.ts).
    Layer.provide(OtlpLayer),
    Layer.provide(loggingLayer(config))
  )
})).pipe(Layer.provideMerge(AppConfig.layer))
