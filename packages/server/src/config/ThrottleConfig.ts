/**
 * Per-address limits (http/AddressThrottle.ts): requests a minute from one
 * client address on the routes anyone may call, and which proxies may name
 * the client (`X-Forwarded-For`). `0` turns a class off. The defaults leave
 * a person, a browser and an MCP client far inside every budget while making
 * guessing and flooding slow.
 */
import { Config, Context, Effect, Layer, Option } from "effect"
import type { BlockList } from "node:net"
import { parseTrustedProxies } from "../http/ClientAddress.ts"
import * as Env from "./Variable.ts"

export interface ThrottleConfigShape {
  /** `POST /oauth/register` per address per minute; 0 = off. */
  readonly registerPerMinute: number
  /** The OAuth and sign-in routes without a credential, together, per address per minute; 0 = off. */
  readonly oauthPerMinute: number
  /** Person API requests per address per minute; 0 = off. */
  readonly personApiPerMinute: number
  /** Routes that take a guessable code or link (invite acceptance, sign-in links) per address per minute; 0 = off. */
  readonly codesPerMinute: number
  /** Failed bearer authentications (401) on the Agent and Person APIs per address per minute; 0 = off. */
  readonly authFailuresPerMinute: number
  /** Sign-in requests (e-mailed links, passkey ceremonies) per address per minute; 0 = off. */
  readonly signInPerMinute: number
  /** The proxies whose `X-Forwarded-For` names the client; undefined when none is trusted. */
  readonly trustedProxies: BlockList | undefined
}

export const throttleVariables = {
  registerPerMinute: Env.integer("HERALD_ADDRESS_LIMIT_REGISTER_PER_MINUTE", {
    default: 60,
    min: 0,
    zero: "turns it off",
    description: "Client registrations (`POST /oauth/register`) per client address per minute; `0` turns the limit off."
  }),
  oauthPerMinute: Env.integer("HERALD_ADDRESS_LIMIT_OAUTH_PER_MINUTE", {
    default: 300,
    min: 0,
    zero: "turns it off",
    description:
      "Requests to `/oauth/authorize` (GET and POST), `/oauth/token`, `/oauth/revoke` and `/oauth/sign-in`, together, per client address per minute; `0` turns the limit off."
  }),
  personApiPerMinute: Env.integer("HERALD_ADDRESS_LIMIT_PERSON_API_PER_MINUTE", {
    default: 600,
    min: 0,
    zero: "turns it off",
    description: "Person API (`/api/app/…`) requests per client address per minute; `0` turns the limit off."
  }),
  codesPerMinute: Env.integer("HERALD_ADDRESS_LIMIT_CODES_PER_MINUTE", {
    default: 60,
    min: 0,
    zero: "turns it off",
    description:
      "Attempts at a guessable code or link (`POST /api/app/invites/accept`, `GET /oauth/sign-in`, `GET /api/app/auth/link`) per client address per minute, failed ones included; `0` turns the limit off."
  }),
  authFailuresPerMinute: Env.integer("HERALD_ADDRESS_LIMIT_AUTH_FAILURES_PER_MINUTE", {
    default: 60,
    min: 0,
    zero: "turns it off",
    description:
      "Failed bearer authentications (answers `401`) on the Agent API, the MCP endpoint and the Person API per client address per minute; past it every Agent and Person API request from the address answers `429` until the budget refills, valid tokens included. `0` turns the limit off."
  }),
  signInPerMinute: Env.integer("HERALD_ADDRESS_LIMIT_SIGN_IN_PER_MINUTE", {
    default: 20,
    min: 0,
    zero: "turns it off",
    description:
      "Sign-in requests (`POST /api/app/auth/email-link`, `POST /api/app/auth/passkey/options`, `POST /api/app/auth/passkey`) per client address per minute; `0` turns the limit off. Each e-mail address also gets at most 5 links per 15 minutes, whoever asks."
  }),
  trustedProxies: Env.optionalString("HERALD_TRUSTED_PROXIES", {
    description:
      "Comma-separated IP addresses or CIDR ranges of reverse proxies in front of Herald. A request from one of them is counted against the right-most `X-Forwarded-For` address that is not itself listed; any other sender's `X-Forwarded-For` is ignored.",
    unset: "(unset: none; every limit counts the socket's address)",
    blankIsUnset: true
  })
}

const proxiesOf = (text: Option.Option<string>): Effect.Effect<BlockList | undefined, Config.ConfigError> => {
  if (Option.isNone(text)) return Effect.succeed(undefined)
  const { invalid, list } = parseTrustedProxies(text.value)
  return invalid.length === 0
    ? Effect.succeed(list)
    : Effect.fail(Env.configError(`HERALD_TRUSTED_PROXIES must list IP addresses or CIDR ranges, not ${invalid.map((e) => JSON.stringify(e)).join(", ")}`))
}

export const throttleConfig: Config.Config<ThrottleConfigShape> = Env.configOf(throttleVariables).pipe(
  Config.mapEffect((c) =>
    Effect.map(proxiesOf(c.trustedProxies), (trustedProxies) => ({
      registerPerMinute: c.registerPerMinute,
      oauthPerMinute: c.oauthPerMinute,
      personApiPerMinute: c.personApiPerMinute,
      codesPerMinute: c.codesPerMinute,
      authFailuresPerMinute: c.authFailuresPerMinute,
      signInPerMinute: c.signInPerMinute,
      trustedProxies
    }))
  )
)

export class ThrottleConfig extends Context.Service<ThrottleConfig, ThrottleConfigShape>()("herald/ThrottleConfig") {
  static readonly layer = Layer.effect(ThrottleConfig, throttleConfig)
}
