/**
 * The platform: the shared infrastructure every capability is built on, each
 * piece built once here (docs/architecture.md, "Conventions"). It needs only
 * the database (`SqlClient` and `PgClient`, given from outside:
 * db/Database.ts `serverDatabaseLayer`, or a test's database) and migrates it
 * before anything reads a table.
 *
 * What is here and why:
 * - config read by many capabilities and the runtime (AppConfig, MetricsConfig);
 * - the database's shared steps: migrations, the unit of work (group commit),
 *   the server's stored keys;
 * - state that must exist once per process: the credential cache, the push
 *   outbox (its node id and drain permits) with its gateway and the quiet-hours
 *   cache it reads, the mail outbox and the webhook deliveries (their wake-ups
 *   reach this process's workers), the inbox signals, the resident live
 *   activities and their device pacing, the actor runtime (cluster), the
 *   per-key rate limiter and the per-address throttle;
 * - the reads most capabilities share and none owns alone: who a person is
 *   (Identity over Credentials), which phones they have (DeviceTargeting),
 *   their inbox and activity feed writes, team standing and the audit trail.
 *
 * A capability's layer (`<folder>/layer.ts`) requires nothing but what this
 * layer provides and needs (`PlatformServices`); runtime/Server.ts merges them.
 */
import type { PgClient } from "@effect/sql-pg"
import { Layer, Metric } from "effect"
import type { SqlClient } from "effect/sql"
import { ResidentActivities } from "../activities/ResidentActivities.ts"
import { DevicePacing } from "../activities/DevicePacing.ts"
import { Credentials } from "../auth/Credentials.ts"
import { Mailer } from "../auth/Mailer.ts"
import { RateLimiter } from "../billing/RateLimiter.ts"
import { ClusterLayer } from "../cluster/Cluster.ts"
import { ActivityConfig } from "../config/ActivityConfig.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { MetricsConfig } from "../config/MetricsConfig.ts"
import { OutboxConfig } from "../config/OutboxConfig.ts"
import { PushConfig } from "../config/PushConfig.ts"
import { WebhookConfig } from "../config/WebhookConfig.ts"
import { MigrationsLayer } from "../db/Migrations.ts"
import { ServerSecrets } from "../db/ServerSecrets.ts"
import { UnitOfWork } from "../db/UnitOfWork.ts"
import { MailOutbox } from "../email/MailOutbox.ts"
import { AddressThrottle } from "../http/AddressThrottle.ts"
import { DeviceTargeting } from "../identity/DeviceTargeting.ts"
import { Identity } from "../identity/Identity.ts"
import { IdentityRepo } from "../identity/IdentityRepo.ts"
import { ActivityFeed } from "../inbox/ActivityFeed.ts"
import { InboxRepo } from "../inbox/InboxRepo.ts"
import { InboxSignals } from "../inbox/InboxSignals.ts"
import { InboxWrites } from "../inbox/InboxWrites.ts"
import { Outbox } from "../push/Outbox.ts"
import { OutboxRepo } from "../push/OutboxRepo.ts"
import { GatewayRepo } from "../push/GatewayRepo.ts"
import { PushGateway, sendDuration, sendsTotal } from "../push/PushGateway.ts"
import { SandboxRepo } from "../push/SandboxRepo.ts"
import { WebPushKeys } from "../push/WebPushKeys.ts"
import { QuietGate } from "../quiet/QuietGate.ts"
import { AuditTrail } from "../teams/AuditTrail.ts"
import { Membership } from "../teams/Membership.ts"
import { Deliveries } from "../webhooks/Deliveries.ts"

/** Settings read across capabilities and by the runtime; a capability's own settings are provided by its layer. */
const Settings = Layer.mergeAll(AppConfig.layer, MetricsConfig.layer, ActivityConfig.layer, WebhookConfig.layer)

/** State that exists once per process, and what holds none but every capability needs beneath the rest. */
const Foundations = Layer.mergeAll(
  Credentials.layer,
  UnitOfWork.layer,
  ServerSecrets.layer,
  IdentityRepo.layer,
  InboxSignals.layer,
  QuietGate.layer,
  SandboxRepo.layer,
  WebPushKeys.layer,
  Mailer.layer,
  ResidentActivities.layer,
  DevicePacing.layer,
  ClusterLayer,
  RateLimiter.layer,
  AddressThrottle.layer
)

/** Delivery (push, mail, webhooks) and the shared reads, over the foundations. */
const Shared = Layer.mergeAll(
  Outbox.layerNoDeps.pipe(
    Layer.provide([OutboxConfig.layer, OutboxRepo.layer]),
    // The gateway takes the platform's one WebPushKeys and SandboxRepo, not copies of its own.
    Layer.provideMerge(PushGateway.layerNoDeps.pipe(Layer.provide([PushConfig.layer, GatewayRepo.layer])))
  ),
  MailOutbox.layerNoDeps,
  Deliveries.layer,
  Identity.layerNoDeps,
  DeviceTargeting.layerNoDeps,
  InboxWrites.layerNoDeps.pipe(Layer.provide(InboxRepo.layer)),
  ActivityFeed.layer,
  Membership.layer,
  AuditTrail.layer
)

/** The platform on a database: migrated first, then every shared service built once. */
export const PlatformLayer = Shared.pipe(
  Layer.provideMerge(Foundations),
  Layer.provideMerge(Settings),
  Layer.provideMerge(MigrationsLayer)
)

/** The database the platform is given (db/Database.ts). */
export type PlatformDatabase = SqlClient.SqlClient | PgClient.PgClient

/** Everything a capability layer may require: what the platform provides, and the database it is built on. */
export type PlatformServices = Layer.Success<typeof PlatformLayer> | PlatformDatabase


/** The platform's metrics listed from the start (observability/MetricsAtZero.ts): the push sends. */
export const platformMetrics: ReadonlyArray<Metric.Metric<number, unknown>> = [sendsTotal, sendDuration]
