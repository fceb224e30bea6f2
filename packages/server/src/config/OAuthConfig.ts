/**
 * The OAuth authorization server's operator settings (issue 30): who may
 * register a client (RFC 7591 §3), how fast all registrations together may
 * come, how many clients may wait for a first approval and for how long, and
 * which private-use redirect schemes are accepted outside RFC 8252's
 * reverse-domain form. Registration is unauthenticated by default, so each of
 * these bounds what one anonymous caller can make the server store.
 */
import { Config, Context, Effect, Layer, Option, Redacted } from "effect"
import * as Env from "./Variable.ts"

export type RegistrationMode = "open" | "token" | "closed"

export interface OAuthConfigShape {
  readonly registration: RegistrationMode
  /** The initial access token `token` mode requires; set exactly when the mode is `token`. */
  readonly registrationToken: Option.Option<Redacted.Redacted<string>>
  /** Registrations a minute on this node, every caller together; 0 = off. */
  readonly registrationsPerMinute: number
  /** Clients registered but never approved (operator-registered ones aside) past which registration answers 429; 0 = off. */
  readonly maxUnapprovedClients: number
  /** How long a client nobody approved is kept. */
  readonly unapprovedClientTtlSeconds: number
  /** Scheme names (lower case, no colon) accepted without a "." though RFC 8252 §7.1 wants reverse-domain form. */
  readonly extraPrivateSchemes: ReadonlyArray<string>
}

export const oauthVariables = {
  registration: Env.literals("HERALD_OAUTH_REGISTRATION", ["open", "token", "closed"], {
    default: "open",
    description: "Who may register an OAuth client at `POST /oauth/register`: `open` anyone (MCP clients register " +
      "themselves), `token` only a request with `Authorization: Bearer <HERALD_OAUTH_REGISTRATION_TOKEN>` (RFC 7591 " +
      "§3 initial access token), `closed` nobody (403; the metadata no longer advertises the endpoint and the operator " +
      "registers clients with `herald admin oauth-client create`)."
  }),
  registrationToken: Env.optionalSecret("HERALD_OAUTH_REGISTRATION_TOKEN", {
    blankIsUnset: true,
    description: "The initial access token registration requires in `token` mode: at least 32 characters (e.g. " +
      "`openssl rand -hex 32`); required in that mode, ignored otherwise."
  }),
  registrationsPerMinute: Env.integer("HERALD_OAUTH_REGISTRATIONS_PER_MINUTE", {
    default: 120,
    min: 0,
    zero: "turns it off",
    description: "Client registrations a minute on each node, all callers together (429 `temporarily_unavailable` " +
      "with `Retry-After` beyond); `0` turns the limit off. The per-address limit is separate."
  }),
  maxUnapprovedClients: Env.integer("HERALD_OAUTH_MAX_UNAPPROVED_CLIENTS", {
    default: 10000,
    min: 0,
    zero: "turns it off",
    description: "Registered clients no person has approved yet (operator-registered ones aside) past which " +
      "registration answers 429 `temporarily_unavailable`; `0` turns the cap off."
  }),
  unapprovedClientTtlMinutes: Env.integer("HERALD_OAUTH_UNAPPROVED_CLIENT_TTL_MINUTES", {
    default: 60,
    min: 1,
    max: 1440,
    description: "How long a registered client no person has approved is kept before the sweep deletes it, in " +
      "minutes (1–1440). A client a person approved is kept while it has a grant."
  }),
  extraPrivateSchemes: Env.string("HERALD_OAUTH_EXTRA_PRIVATE_SCHEMES", {
    default: "cursor",
    description: "Comma-separated private-use redirect URI schemes accepted although they are not in RFC 8252 §7.1 " +
      "reverse-domain form (`com.example.app:`), for widely used clients that predate the rule (Cursor registers " +
      "`cursor://…`); empty accepts only reverse-domain schemes. Operating-system handler schemes stay refused."
  })
}

const SCHEME = /^[a-z][a-z0-9+.-]*$/

export const oauthConfig: Config.Config<OAuthConfigShape> = Env.configOf(oauthVariables).pipe(
  Config.mapEffect((c) => {
    const token = c.registrationToken
    if (c.registration === "token" && (Option.isNone(token) || Redacted.value(token.value).trim().length < 32)) {
      return Effect.fail(Env.configError(
        "HERALD_OAUTH_REGISTRATION=token needs HERALD_OAUTH_REGISTRATION_TOKEN of at least 32 characters (e.g. openssl rand -hex 32)"
      ))
    }
    const schemes = c.extraPrivateSchemes.split(",").map((s) => s.trim().toLowerCase().replace(/:$/, "")).filter((s) => s !== "")
    const bad = schemes.find((s) => !SCHEME.test(s) || s === "http" || s === "https")
    if (bad !== undefined) return Effect.fail(Env.configError(`HERALD_OAUTH_EXTRA_PRIVATE_SCHEMES lists URI scheme names; not ${JSON.stringify(bad)}`))
    return Effect.succeed({
      registration: c.registration,
      registrationToken: c.registration === "token" ? Option.map(token, (t) => Redacted.make(Redacted.value(t).trim())) : Option.none(),
      registrationsPerMinute: c.registrationsPerMinute,
      maxUnapprovedClients: c.maxUnapprovedClients,
      // At least a minute (a client registers right before the person consents), at most the day approved ones get.
      unapprovedClientTtlSeconds: c.unapprovedClientTtlMinutes * 60,
      extraPrivateSchemes: schemes
    })
  })
)

export class OAuthConfig extends Context.Service<OAuthConfig, OAuthConfigShape>()("herald/OAuthConfig") {
  static readonly layer = Layer.effect(OAuthConfig, oauthConfig)
}
