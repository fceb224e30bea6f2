/**
 * Every setting of the server, checked at once before a command opens anything:
 * a bad value stops `herald serve`, `migrate` or `admin …` before a data
 * directory is made or a database is reached, with one message per refused
 * variable (its name, its value and the rule; a secret's value is never shown).
 * The capabilities read the same `Config`s again when they are built; reading
 * the environment twice is cheap, opening a database for nothing is not.
 */
import { Config, ConfigProvider, Effect, Result } from "effect"
import { activityConfig } from "./ActivityConfig.ts"
import { appConfig } from "./AppConfig.ts"
import { clusterConfig } from "./ClusterConfig.ts"
import { domainConfig } from "./DomainConfig.ts"
import { maintenanceConfig } from "./MaintenanceConfig.ts"
import { metricsConfig } from "./MetricsConfig.ts"
import { oauthConfig } from "./OAuthConfig.ts"
import { oncallConfig } from "./OncallConfig.ts"
import { otlpConfig } from "./OtlpConfig.ts"
import { outboxConfig } from "./OutboxConfig.ts"
import { pushConfig } from "./PushConfig.ts"
import { rateLimitConfig } from "./RateLimitConfig.ts"
import { signInConfig } from "./SignInConfig.ts"
import { throttleConfig } from "./ThrottleConfig.ts"
import { webhookConfig } from "./WebhookConfig.ts"
import { configError } from "./Variable.ts"

const every: ReadonlyArray<Config.Config<unknown>> = [
  appConfig,
  activityConfig,
  clusterConfig,
  domainConfig,
  maintenanceConfig,
  metricsConfig,
  oauthConfig,
  oncallConfig,
  otlpConfig,
  outboxConfig,
  pushConfig,
  rateLimitConfig,
  signInConfig,
  throttleConfig,
  webhookConfig
]

/** A refusal's own words: Herald's checks say them in full; anything else keeps the schema's message. */
const messageOf = (error: Config.ConfigError) =>
  error.cause instanceof ConfigProvider.SourceError ? error.cause.message : error.message

/**
 * Reads every setting; fails with one `ConfigError` listing each refusal
 * (`; `-separated, in the order of the reference), or succeeds with nothing.
 */
export const checkConfig: Effect.Effect<void, Config.ConfigError> = Effect.gen(function*() {
  const refusals: Array<string> = []
  for (const config of every) {
    const read = yield* Effect.result(config)
    if (Result.isFailure(read)) refusals.push(messageOf(read.failure))
  }
  if (refusals.length > 0) return yield* Effect.fail(configError([...new Set(refusals)].join("; ")))
})
