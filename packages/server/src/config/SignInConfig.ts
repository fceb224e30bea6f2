/**
 * How e-mailed sign-in links leave (issue 32): an SMTP server, or, without
 * one, the server log, so the embedded quick start signs a person in with no
 * mail set up. The URL carries the credentials, so it is a secret.
 */
import { Config, Context, Effect, Layer, Option, Redacted } from "effect"
import * as Env from "./Variable.ts"

export interface SignInConfigShape {
  /** `smtp://` or `smtps://` with any credentials; none: links go to the log. */
  readonly smtpUrl: Option.Option<Redacted.Redacted<string>>
  /** The `From` of sign-in mail; none: `Herald <herald@` + the public URL's host + `>`. */
  readonly smtpFrom: Option.Option<string>
}

export const signInVariables = {
  smtpUrl: Env.optionalSecret("HERALD_SMTP_URL", {
    blankIsUnset: true,
    unset: "(unset: each sign-in link is written to the server log at Info)",
    description: "The SMTP server that sends sign-in links: `smtp://user:password@host:587` (STARTTLS when the " +
      "server offers it) or `smtps://user:password@host:465` (TLS from the start); user and password URL-encoded. " +
      "Unset: no mail is sent and each requested link is written to the server log, for a local quick start. " +
      "The same server sends the [e-mail channel](email.md)'s mail (prompt fallbacks, pages, address checks); " +
      "unset, the channel cannot be turned on (`mailConfigured: false`)."
  }),
  smtpFrom: Env.optionalString("HERALD_SMTP_FROM", {
    blankIsUnset: true,
    unset: "(unset: `Herald <herald@HOST>`, HOST being the public URL's host name)",
    description: "The `From` address of sign-in mail and of the [e-mail channel](email.md)'s mail, e.g. " +
      "`Herald <herald@example.com>`."
  })
}

export const signInConfig: Config.Config<SignInConfigShape> = Env.configOf(signInVariables).pipe(
  Config.mapEffect((c) => {
    const url = Option.map(c.smtpUrl, (u) => Redacted.value(u).trim())
    if (Option.isSome(url)) {
      const parsed = URL.parse(url.value)
      if (parsed === null || (parsed.protocol !== "smtp:" && parsed.protocol !== "smtps:") || parsed.hostname === "") {
        // The value may hold a password: name the variable, never the value.
        return Effect.fail(Env.configError("HERALD_SMTP_URL must be an smtp:// or smtps:// URL with a host (smtp://user:password@host:587)"))
      }
    }
    if (Option.isSome(c.smtpFrom) && /[\r\n]/.test(c.smtpFrom.value)) {
      return Effect.fail(Env.configError("HERALD_SMTP_FROM must be one line"))
    }
    return Effect.succeed({ smtpUrl: Option.map(url, Redacted.make), smtpFrom: c.smtpFrom })
  })
)

export class SignInConfig extends Context.Service<SignInConfig, SignInConfigShape>()("herald/SignInConfig") {
  static readonly layer = Layer.effect(SignInConfig, signInConfig)
}
