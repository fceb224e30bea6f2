/**
 * Where this node's cluster runner is reached and where it listens
 * (cluster/Cluster.ts). On PostgreSQL every `herald serve` is an
 * `effect/cluster` runner: the other runners send it the messages of the
 * entities on its shards at its address. Unset, it listens on a free loopback
 * port: a lone node, which refuses to start beside live runners
 * (cluster/Runner.ts). The embedded database serves one process and uses neither.
 */
import { Config, Context, Effect, Layer, Option } from "effect"
import * as Env from "./Variable.ts"

export interface HostPort {
  readonly host: string
  /** `0`: a free port, picked when the runner starts listening. */
  readonly port: number
}

export interface ClusterConfigShape {
  /** Where the other runners reach this one; None: `127.0.0.1` and the port it listens on, a lone runner. */
  readonly address: Option.Option<HostPort>
  /** Where its socket listens; None: the host and port of `address`. */
  readonly listenAddress: Option.Option<HostPort>
}

const ADDRESS = "HERALD_RUNNER_ADDRESS"
const LISTEN = "HERALD_RUNNER_LISTEN_ADDRESS"

/** `host:port`, or `[ipv6]:port`; the port 0–65535. Undefined when it is neither. */
export const parseHostPort = (value: string): HostPort | undefined => {
  const match = /^\[([^\]\s]+)\]:(\d{1,5})$/.exec(value) ?? /^([^\s:/[\]]+):(\d{1,5})$/.exec(value)
  if (match === null) return undefined
  const port = Number(match[2])
  return port <= 65535 ? { host: match[1]!, port } : undefined
}

/** How a `HostPort` is written back: brackets around an IPv6 host. */
export const formatHostPort = ({ host, port }: HostPort) => host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`

const isWildcard = (host: string) => host === "0.0.0.0" || host === "::"

/** An optional `host:port`; blank counts as unset; anything else that is not one stops the server with a message naming the variable. */
const hostPort = (name: string, description: string, unset: string): Env.Variable<Option.Option<HostPort>> => ({
  name,
  type: "`host:port` (`[ipv6]:port`; port 0–65535, `0`: a free one)",
  default: unset,
  description,
  config: Config.option(Config.String(name)).pipe(
    Config.map(Option.map((value) => value.trim())),
    Config.map(Option.filter((value) => value !== "")),
    Config.mapEffect(Option.match({
      onNone: () => Effect.succeed(Option.none<HostPort>()),
      onSome: (value) => {
        const parsed = parseHostPort(value)
        return parsed !== undefined
          ? Effect.succeed(Option.some(parsed))
          : Effect.fail(Env.configError(`${name} must be host:port (for example 10.0.0.5:34431 or [fd00::5]:34431), not ${JSON.stringify(value)}`))
      }
    }))
  )
})

export const clusterVariables = {
  address: hostPort(
    ADDRESS,
    "Where the other nodes reach this node's cluster runner (PostgreSQL only): an address of this host they can " +
      "connect to, unique per node. The runner socket has no authentication of its own: keep it on a private network. " +
      "A lone node may leave it unset; a node without it refuses to start (exit 1, naming this setting) while other " +
      "runners are live on the database, so set it on every node that runs beside others. " +
      "The embedded database serves one process and ignores it.",
    "`127.0.0.1` and a free port: a lone node"
  ),
  listenAddress: hostPort(
    LISTEN,
    "Where the runner socket listens, when that differs from `HERALD_RUNNER_ADDRESS` (e.g. `0.0.0.0:34431` in a " +
      "container whose address other nodes reach through a mapped port).",
    "`HERALD_RUNNER_ADDRESS`"
  )
}

export const clusterConfig: Config.Config<ClusterConfigShape> = Env.configOf(clusterVariables).pipe(
  Config.mapEffect((c) => {
    if (Option.isSome(c.address) && isWildcard(c.address.value.host)) {
      return Effect.fail(Env.configError(
        `${ADDRESS} is where the other nodes connect, not an interface to listen on (${formatHostPort(c.address.value)}): ` +
          `set it to this node's address, and ${LISTEN} to listen on every interface`
      ))
    }
    if (Option.isNone(c.address) && Option.isSome(c.listenAddress) && isWildcard(c.listenAddress.value.host)) {
      return Effect.fail(Env.configError(
        `${LISTEN} listens on every interface (${formatHostPort(c.listenAddress.value)}): set ${ADDRESS} to the address other nodes reach this one at`
      ))
    }
    // Listening on one address only: that is where the others reach it.
    return Effect.succeed({ address: Option.orElse(c.address, () => c.listenAddress), listenAddress: c.listenAddress })
  })
)

export class ClusterConfig extends Context.Service<ClusterConfig, ClusterConfigShape>()("herald/ClusterConfig") {
  static readonly layer = Layer.effect(ClusterConfig, clusterConfig)
}
