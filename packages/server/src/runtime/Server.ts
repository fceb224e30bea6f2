/**
 * The layer graph of `herald serve`: config → logging → database (+
 * migrations) → capabilities → both APIs, docs and operator routes → the Node
 * HTTP server, and the workers beside it.
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
import { MigrationsLayer } from "../db/Migrations.ts"
import { UnitOfWork } from "../db/UnitOfWork.ts"
import { answerClientErrors } from "../http/ClientErrors.ts"
import { DocsPages } from "../http/DocsHeaders.ts"
import { AddressThrottle, AddressThrottleMiddleware } from "../http/AddressThrottle.ts"
import { EdgeMiddleware } from "../http/Edge.ts"
import { OpsRoutes } from "../http/Ops.ts"
import { ConsoleRoutes } from "../console/ConsoleRoutes.ts"
import { routerConfig } from "../http/Routes.ts"
import { MetricsAtZeroLayer } from "../observability/MetricsAtZero.ts"
import { RequestErrorsLive } from "../http/RequestErrors.ts"
import { MeHandlers, PersonDevicesHandlers, PersonTokensHandlers } from "../identity/appHttp.ts"
import { AuthHandlers, DevicesHandlers, TokensHandlers } from "../identity/http.ts"
import { DeviceTargeting } from "../identity/DeviceTargeting.ts"
import { Identity } from "../identity/Identity.ts"
import { ActivityFeed } from "../inbox/ActivityFeed.ts"
import { InboxHandlers } from "../inbox/http.ts"
import { Inbox } from "../inbox/Inbox.ts"
import { InboxWrites } from "../inbox/InboxWrites.ts"
import { PersonInboxHandlers } from "../inbox/appHttp.ts"
import { InboxSignals } from "../inbox/InboxSignals.ts"
import { InboxStream } from "../inbox/InboxStream.ts"
import { PersonTeamsHandlers } from "../teams/appHttp.ts"
import { PersonOncallHandlers } from "../oncall/oncallAppHttp.ts"
import { PersonMiniAppsHandlers } from "../miniApps/appHttp.ts"
import { NotificationsHandlers } from "../notifications/http.ts"
import { Notifications } from "../notifications/Notifications.ts"
import { Billing } from "../billing/Billing.ts"
import { BillingHandlers } from "../billing/http.ts"
import { RateLimiter } from "../billing/RateLimiter.ts"
import { Idempotency } from "../idempotency/Idempotency.ts"
import { ErrorLoggingLayer } from "../observability/ErrorLogging.ts"
import { MetricsListener, MetricsListenerLayer } from "./MetricsListener.ts"
import { WorkersLayer } from "./Workers.ts"
import { loggingLayer } from "../observability/Logging.ts"
import { BackgroundTraceLevel, OtlpLayer } from "../observability/Otlp.ts"
import { Outbox } from "../push/Outbox.ts"
import { PushGateway } from "../push/PushGateway.ts"
import { SandboxRepo } from "../push/SandboxRepo.ts"
import { WebPushKeys } from "../push/WebPushKeys.ts"
import { InboundHandlers } from "../services/hooksHttp.ts"
import { HistoryHandlers, ServicesHandlers } from "../services/http.ts"
import { Services } from "../services/Services.ts"
import { LiveActivityLive } from "../activities/ActivityBehaviour.ts"
import { DevicePacing } from "../activities/DevicePacing.ts"
import { ResidentActivities } from "../activities/ResidentActivities.ts"
import { ActivitiesHandlers, PersonActivitiesHandlers } from "../activities/http.ts"
import { LiveActivities } from "../activities/LiveActivities.ts"
import { ActivitiesRepos } from "../activities/Repos.ts"
import { ClusterLayer } from "../cluster/Cluster.ts"
import { ActivityConfig } from "../config/ActivityConfig.ts"
import { OncallConfig } from "../config/OncallConfig.ts"
import { PersonInteractionsHandlers, InteractionsHandlers } from "../interactions/http.ts"
import { Reminders } from "../interactions/Reminders.ts"
import { PersonRemindersHandlers } from "../interactions/remindersHttp.ts"
import { Interactions } from "../interactions/Interactions.ts"
import { PromptLive } from "../interactions/PromptBehaviour.ts"
import { InteractionsRepo } from "../interactions/Repo.ts"
import { Transitions } from "../interactions/Transitions.ts"
import { PromptWakeups } from "../interactions/Wakeups.ts"
import { AppAccess } from "../apps/AppAccess.ts"
import { Apps } from "../apps/Apps.ts"
import { PersonAppsHandlers } from "../apps/appHttp.ts"
import { AppsHandlers } from "../apps/http.ts"
import { AuditTrail } from "../teams/AuditTrail.ts"
import { AuditHandlers } from "../teams/auditHttp.ts"
import { AuditLog } from "../teams/AuditLog.ts"
import { AuditRetention } from "../teams/AuditRetention.ts"
import { DeviceGroups } from "../teams/DeviceGroups.ts"
import { DeviceGroupsHandlers } from "../teams/deviceGroupsHttp.ts"
import { Membership } from "../teams/Membership.ts"
import { Teams } from "../teams/Teams.ts"
import { TeamsHandlers } from "../teams/http.ts"
import { Invites } from "../teams/Invites.ts"
import { PersonInvitesHandlers, TeamInvitesHandlers } from "../teams/invitesHttp.ts"
import { Domains } from "../teams/Domains.ts"
import { TeamDomainHandlers } from "../teams/domainHttp.ts"
import { WebhooksHandlers } from "../webhooks/http.ts"
import { PageLive } from "../oncall/PageBehaviour.ts"
import { WatchAlerts } from "../watch/WatchAlerts.ts"
import { DeliveryWatchLive } from "../watch/WatchBehaviour.ts"
import { WatchRepo } from "../watch/WatchRepo.ts"
import { ConnectorWatch } from "../watch/ConnectorWatch.ts"
import { ConnectorWatchRepo } from "../watch/ConnectorWatchRepo.ts"
import { Pages } from "../oncall/Pages.ts"
import { PersonPagesHandlers } from "../oncall/pagesAppHttp.ts"
import { PagesHandlers } from "../oncall/pagesHttp.ts"
import { PagesRepo } from "../oncall/PagesRepo.ts"
import { GroupsRepo } from "../oncall/GroupsRepo.ts"
import { Groups as OncallGroups } from "../oncall/Groups.ts"
import { OncallGroupsHandlers } from "../oncall/groupsHttp.ts"
import { PageSteps } from "../oncall/PageSteps.ts"
import { ReplyWebhooks } from "../webhooks/ReplyWebhooks.ts"
import { MiniAppsHandlers } from "../miniApps/http.ts"
import { Review as MiniAppReview } from "../miniApps/Review.ts"
import { MiniAppReviewHandlers } from "../miniApps/reviewHttp.ts"
import { PersonConnectorsHandlers } from "../connectors/appHttp.ts"
import { ConnectorsHandlers } from "../connectors/http.ts"
import { ConnectorsLayer } from "../connectors/layer.ts"
import { Packages } from "../miniApps/Packages.ts"
import { PackagesRepo } from "../miniApps/PackagesRepo.ts"
import { Signing } from "../miniApps/Signing.ts"
import { McpRoutes } from "../mcp/McpRoutes.ts"
import { McpSessions } from "../mcp/McpSessions.ts"
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
import { PageEmailLayer, PromptEmailLayer } from "../email/layer.ts"

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

const PushLayer = Outbox.layer.pipe(Layer.provideMerge(PushGateway.layer))

const MessagingLayer = Layer.mergeAll(Notifications.layer, Services.layer.pipe(Layer.provide([AppConfig.layer, ClusterLayer]))).pipe(
  Layer.provideMerge(Layer.mergeAll(InboxWrites.layer, ActivityFeed.layer, PushLayer, Identity.layer, DeviceTargeting.layer, UnitOfWork.layer))
)

/** Prompts: the service, its entity on this process's cluster runtime, and reply webhooks. */
const PromptsLayer = Interactions.layerNoDeps.pipe(
  Layer.provideMerge(Layer.mergeAll(PromptLive, LiveActivityLive)),
  Layer.provideMerge(Transitions.layer),
  // Reminders of pending prompts: what the entity's Remind timer runs and where a new prompt's default comes from.
  Layer.provideMerge(Reminders.layer),
  // The e-mail channel: what the entity's EmailFallback timer runs, the person's settings (email/).
  Layer.provideMerge(PromptEmailLayer),
  Layer.provideMerge(PromptWakeups.layer),
  Layer.provideMerge(LiveActivities.layerNoDeps),
  Layer.provideMerge(Layer.mergeAll(DevicePacing.layer, ResidentActivities.layer)),
  Layer.provideMerge(Layer.mergeAll(InteractionsRepo.layer, ActivitiesRepos, ReplyWebhooks.layer, ClusterLayer, ActivityConfig.layer, AppAccess.layer))
)

/** Teams and families (membership, invites, device groups, the domain, the audit log) and web apps. */
const TeamsLayer = Layer.mergeAll(
  Invites.layer,
  DeviceGroups.layer,
  Domains.layer,
  AuditLog.layer,
  AuditRetention.layer,
  Apps.layer.pipe(Layer.provide(MessagingLayer))
).pipe(Layer.provideMerge(Layer.mergeAll(Membership.layer, AuditTrail.layer, Teams.layer)))

/** On-call pages: the service and its entity (one actor per page, durable escalation timers) on the cluster runtime. */
const PagesLayer = Layer.mergeAll(Pages.layerNoDeps, PageLive).pipe(
  Layer.provideMerge(PageSteps.layer),
  // A paged person without an active device is mailed (email/PageMail.ts).
  Layer.provideMerge(PageEmailLayer),
  Layer.provideMerge(Layer.mergeAll(PagesRepo.layer, GroupsRepo.layer)),
  Layer.provide(Layer.mergeAll(ClusterLayer, MessagingLayer, Membership.layer, AuditTrail.layer, AppAccess.layer, OncallConfig.layer))
)

/** The dead-man's switch of webhook services: one actor per watched service, its alerts (watch/). */
const WatchLayer = DeliveryWatchLive.pipe(
  Layer.provideMerge(WatchAlerts.layerNoDeps),
  Layer.provide(Layer.mergeAll(ConnectorWatch.layer, WatchRepo.layer, ConnectorWatchRepo.layer)),
  Layer.provide(Layer.mergeAll(ClusterLayer, MessagingLayer, PagesLayer))
)

/** Mini-app packages: publish and reads, and the signing keys. */
const MiniAppsLayer = Packages.layer.pipe(
  Layer.provide(AppConfig.layer),
  Layer.provideMerge(Layer.mergeAll(PackagesRepo.layer, Signing.layer))
)

/** Mini-app package review: states, reports, offers (pushes through the outbox). */
const MiniAppReviewLayer = MiniAppReview.layer.pipe(Layer.provide(Layer.mergeAll(AppConfig.layer, MessagingLayer)))

/** Everything that needs the database, built on a migrated one. */
export const CapabilitiesLayer = Layer.mergeAll(
  PromptsLayer.pipe(Layer.provideMerge(MessagingLayer)),
  Inbox.layer,
  // One per process: what InboxWrites publishes, the streams hear (and the listener worker, on PostgreSQL).
  InboxSignals.layer,
  InboxStream.layer.pipe(Layer.provide(MessagingLayer)),
  Idempotency.layer,
  Billing.layer,
  SandboxRepo.layer,
  WebPushKeys.layer,
  TeamsLayer,
  PagesLayer,
  WatchLayer,
  OncallGroups.layer,
  MiniAppsLayer,
  MiniAppReviewLayer,
  // With the heartbeat watch's settings (watch/ConnectorWatch.ts: its timers are the cluster's).
  ConnectorsLayer.pipe(Layer.provideMerge(ConnectorWatch.layer), Layer.provide(ClusterLayer)),
  // Sign-in: browser sessions, one-time links, e-mailed links, passkeys (auth/layer.ts).
  SignInLayer.pipe(Layer.provide(MessagingLayer)),
  OAuthLayer.pipe(Layer.provide(MessagingLayer)),
  McpSessions.layer.pipe(Layer.provide(MessagingLayer)),
  // Quiet hours: settings, the per-process cache the outbox reads, the summaries of held pushes (quiet/).
  QuietLayer.pipe(Layer.provide(MessagingLayer)),
  // Read by the operator routes and the metrics listener (http/Ops.ts, MetricsListener.ts).
  MetricsConfig.layer
).pipe(
  Layer.provideMerge(Layer.merge(RateLimiter.layer, AddressThrottle.layer)),
  Layer.provideMerge(MigrationsLayer)
)

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
    Layer.provideMerge(NodeHttpServer.layer(() => answerClientErrors(createServer({ keepAliveTimeout: 65_000 })), options)),
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
