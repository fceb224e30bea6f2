/**
 * Who may read `/metrics` (http/Ops.ts). Unset, it is served on the API
 * listener to anyone, as before: fine on the default loopback `HOST`, and
 * what the docs tell operators to change before exposing Herald. A metrics
 * port moves it to a listener of its own (loopback unless told), and a token
 * makes every scrape show `Authorization: Bearer <token>`, wherever it is
 * served.
 */
import { Config, Context, Effect, Layer, Option } from "effect"
import type { Redacted } from "effect"
import * as Env from "./Variable.ts"

export interface MetricsConfigShape {
  /** Some: `/metrics` is served on its own listener at this port (`0`: any free one), and not on the API listener. */
  readonly port: Option.Option<number>
  /** The metrics listener's interface. */
  readonly host: string
  /** Some: a scrape must send this bearer token. */
  readonly token: Option.Option<Redacted.Redacted<string>>
}

const PORT = "HERALD_METRICS_PORT"

/** An optional port; blank counts as unset (a common shell idiom), `0` asks the system for a free one (tests). */
const optionalPort: Env.Variable<Option.Option<number>> = {
  name: PORT,
  type: "port (0–65535)",
  default: "(unset)",
  description: "A port for a separate metrics listener: `/metrics` is served there, and no longer on the API " +
    "listener (`0`: any free port). Unset: `/metrics` is on the API listener.",
  config: Config.option(Config.String(PORT)).pipe(
    Config.map(Option.filter((value) => value.trim() !== "")),
    Config.mapEffect(Option.match({
      onNone: () => Effect.succeed(Option.none<number>()),
      onSome: (value) => {
        const port = Number(value.trim())
        return Number.isInteger(port) && port >= 0 && port <= 65535
          ? Effect.succeed(Option.some(port))
          : Effect.fail(Env.configError(`${PORT} must be a port from 0 to 65535, not ${JSON.stringify(value)}`))
      }
    }))
  )
}

export const metricsVariables = {
  port: optionalPort,
  host: Env.string("HERALD_METRICS_HOST", {
    default: "127.0.0.1",
    description: "Interface of the metrics listener (with `HERALD_METRICS_PORT`): keep it private (loopback, or the " +
      "address your Prometheus reaches on an internal network)."
  }),
  token: Env.optionalSecret("HERALD_METRICS_TOKEN", {
    blankIsUnset: true,
    description: "A bearer token every scrape of `/metrics` must send (`Authorization: Bearer <token>`; else 401), " +
      "on whichever listener serves it. Unset: no token is asked."
  })
}

export const metricsConfig: Config.Config<MetricsConfigShape> = Env.configOf(metricsVariables)

export class MetricsConfig extends Context.Service<MetricsConfig, MetricsConfigShape>()("herald/MetricsConfig") {
  static readonly layer = Layer.effect(MetricsConfig, metricsConfig)
}
