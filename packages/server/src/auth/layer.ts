/**
 * Sign-in's services (issue 32) over their SQL: browser sessions, one-time links (also `herald admin session link`'s),
 * e-mailed links, passkeys and the sweep. Identity, the mailer and the
 * settings are the platform's.
 */
import { Layer } from "effect"
import { SignInLinks } from "../oauth/SignInLinks.ts"
import { SignInLinksRepo } from "../oauth/SignInLinksRepo.ts"
import { BrowserSessions } from "./BrowserSessions.ts"
import { EmailSignIn } from "./EmailSignIn.ts"
import { Passkeys } from "./Passkeys.ts"
import { PasskeysRepo } from "./PasskeysRepo.ts"
import { SessionsRepo } from "./SessionsRepo.ts"
import { SignInRepo } from "./SignInRepo.ts"
import { SignInSweep } from "./SignInSweep.ts"

export const SignInLayer = Layer.mergeAll(EmailSignIn.layerNoDeps, Passkeys.layerNoDeps, SignInSweep.layerNoDeps).pipe(
  Layer.provideMerge(SignInLinks.layerNoDeps),
  Layer.provideMerge(BrowserSessions.layerNoDeps),
  Layer.provideMerge(Layer.mergeAll(SignInRepo.layer, PasskeysRepo.layer, SessionsRepo.layer, SignInLinksRepo.layer))
)
