/** The OAuth services over their SQL and settings; Identity (revocation) and the server's CSRF key are the platform's. */
import { Layer } from "effect"
import { OAuthConfig } from "../config/OAuthConfig.ts"
import { Authorization } from "./Authorization.ts"
import { ClientsRepo } from "./ClientsRepo.ts"
import { GrantsRepo } from "./GrantsRepo.ts"
import { OAuthClients } from "./OAuthClients.ts"
import { OAuthSweep } from "./Sweep.ts"
import { Tokens } from "./Tokens.ts"

export const OAuthLayer = Layer.mergeAll(Authorization.layerNoDeps, Tokens.layerNoDeps, OAuthSweep.layerNoDeps).pipe(
  Layer.provideMerge(OAuthClients.layerNoDeps),
  Layer.provideMerge(Layer.mergeAll(ClientsRepo.layer, GrantsRepo.layer, OAuthConfig.layer))
)
