/**
 * The configuration reference, `docs/configuration.md`, rendered from the
 * variable declarations the config modules read. `npm run docs:config` writes
 * it; `test/config/reference.test.ts` fails when the committed file differs.
 */
import { activityVariables } from "./ActivityConfig.ts"
import { appVariables } from "./AppConfig.ts"
import { clusterVariables } from "./ClusterConfig.ts"
import { domainVariables } from "./DomainConfig.ts"
import { maintenanceVariables } from "./MaintenanceConfig.ts"
import { metricsVariables } from "./MetricsConfig.ts"
import { oauthVariables } from "./OAuthConfig.ts"
import { oncallVariables } from "./OncallConfig.ts"
import { otlpVariables } from "./OtlpConfig.ts"
import { outboxVariables } from "./OutboxConfig.ts"
import { pushVariables } from "./PushConfig.ts"
import { rateLimitVariables } from "./RateLimitConfig.ts"
import { signInVariables } from "./SignInConfig.ts"
import { throttleVariables } from "./ThrottleConfig.ts"
import { webhookVariables } from "./WebhookConfig.ts"
import { list, type Variable } from "./Variable.ts"

export interface Section {
  readonly title: string
  readonly intro: string
  readonly variables: ReadonlyArray<Variable<unknown>>
}

/** Every variable the server reads, by concern, in the order the reference shows them. */
export const sections: ReadonlyArray<Section> = [
  {
    title: "Server, database and logs",
    intro: "Where Herald listens, which database it uses, and how it logs.",
    variables: list(appVariables)
  },
  {
    title: "Cluster runners",
    intro: "On PostgreSQL every `herald serve` is a runner of the actor runtime: the nodes reach each other at these " +
      "addresses to call the entities that live on another node (see [architecture](architecture.md#the-actor-runtime)). " +
      "The embedded database serves one process and uses neither.",
    variables: list(clusterVariables)
  },
  {
    title: "Table maintenance",
    intro: "Herald vacuums and analyzes its own queue tables (see [operations](operations.md#table-maintenance)).",
    variables: list(maintenanceVariables)
  },
  {
    title: "Metrics",
    intro: "Who may scrape `/metrics`. With neither set it is served on the API listener to anyone; in production " +
      "use a separate listener on a private interface, or a token behind a public proxy (see [operations](operations.md#metrics)).",
    variables: list(metricsVariables)
  },
  {
    title: "Traces and metrics over OTLP",
    intro: "Export of traces and metrics to an OpenTelemetry receiver, under the OpenTelemetry SDKs' own variable names; " +
      "nothing is exported while `OTEL_EXPORTER_OTLP_ENDPOINT` is unset (see " +
      "[operations](operations.md#traces-and-metrics-over-otlp)).",
    variables: list(otlpVariables)
  },
  {
    title: "Push providers",
    intro: "APNs is in use when `APNS_KEY`, `APNS_KEY_ID`, `APNS_TEAM_ID` and `APNS_TOPIC` are all set, FCM when " +
      "`FCM_SERVICE_ACCOUNT` is; every platform without credentials uses the sandbox provider. Browsers always use " +
      "Web Push, which needs no credentials: its VAPID key is made and kept by the service (rotated with " +
      "`herald admin webpush rotate`). A partial " +
      "configuration stops the server at start with a message naming what is missing; secrets are never printed.",
    variables: list(pushVariables)
  },
  {
    title: "Push outbox",
    intro: "How the durable push queue drains on each node.",
    variables: list(outboxVariables)
  },
  {
    title: "Reply webhooks",
    intro: "Where reply webhooks may point, and how their deliveries go out.",
    variables: list(webhookVariables)
  },
  {
    title: "Live activities",
    intro: "Pacing of live-activity pushes per device.",
    variables: list(activityVariables)
  },
  {
    title: "On-call",
    intro: "Timing of on-call escalation.",
    variables: list(oncallVariables)
  },
  {
    title: "Rate limits",
    intro: "Per-token budgets of the Agent API (see [limits](limits.md)); `0` turns one off.",
    variables: list(rateLimitVariables)
  },
  {
    title: "Per-address limits",
    intro: "Budgets per client address on the routes anyone may call, the Person API and failed authentications " +
      "(see [limits](limits.md#per-address-limits)); `0` turns one off.",
    variables: list(throttleVariables)
  },
  {
    title: "Sign-in",
    intro: "How a person's e-mailed sign-in links leave (see [operations](operations.md#sign-in)); passkeys need no " +
      "setting: their relying party is the host of `HERALD_PUBLIC_URL`.",
    variables: list(signInVariables)
  },
  {
    title: "OAuth client registration",
    intro: "Who may register a remote-tool (MCP) client and how registration is bounded (see [security](security.md) " +
      "and [limits](limits.md)).",
    variables: list(oauthVariables)
  },
  {
    title: "Team domain verification",
    intro: "The DNS TXT lookup of `POST /api/agent/teams/{id}/domain/verify`: which servers answer it and how long it may take.",
    variables: list(domainVariables)
  }
]

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ")

const table = (variables: ReadonlyArray<Variable<unknown>>) => [
  "| variable | type | default | what it does |",
  "|---|---|---|---|",
  ...variables.map((v) => `| \`${v.name}\` | ${cell(v.type)} | ${cell(v.default)} | ${cell(v.description)} |`)
]

/** The whole of `docs/configuration.md`. */
export const renderConfigurationReference = (): string =>
  [
    "# Configuration",
    "",
    "<!-- Generated from packages/server/src/config/*.ts by `npm run docs:config`; edit the declarations there, not this file. -->",
    "",
    "Every setting is an environment variable, read once at start. Every one is checked before anything is",
    "opened: a value of the wrong type or out of its range stops `herald serve`, `herald migrate` and `herald admin …`",
    "(exit 1, no data directory made, no database reached) with a message naming the variable, the value and the",
    "rule, e.g. `HERALD_RATE_LIMIT_PER_MINUTE must be an integer of at least 0, not \"-5\"` (a secret's value is never",
    "shown). A count or a duration is never negative, and is `0` only where the table says what `0` means.",
    "`herald admin …` and `herald migrate` read the same variables as `herald serve`.",
    "How to run against PostgreSQL and with real push providers: [operations](operations.md).",
    "",
    ...sections.flatMap((s) => [`## ${s.title}`, "", s.intro, "", ...table(s.variables), ""])
  ].join("\n")
