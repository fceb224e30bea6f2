/** The OAuth services over their SQL, Identity (revocation), the server's CSRF key and the OAuth settings. */
import { Layer } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { OAuthConfig } from "../config/OAuthConfig.ts"
import { ServerSecrets } from "../db/ServerSecrets.ts"
import { Authorization } from "./Authorization.ts"
import { ClientsRepo } from "./ClientsRepo.ts"
import { GrantsRepo } from "./GrantsRepo.ts"
import { OAuthClients } from "./OAuthClients.ts"
import { OAuthSweep } from "./Sweep.ts"
import { Tokens } from "./Tokens.ts"

/** Needs Identity (and its Credentials) and SqlClient. */
export const OAuthLayer = Layer.mergeAll(Authorization.layerNoDeps, Tokens.layerNoDeps, OAuthSweep.layerNoDeps).pipe(
  Layer.provideMerge(OAuthClients.layerNoDeps),
  Layer.provideMerge(Layer.mergeAll(ClientsRepo.layer, GrantsRepo.layer, ServerSecrets.layer, AppConfig.layer, OAuthConfig.layer))
)
