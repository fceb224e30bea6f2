export { HeraldClient, HeraldPersonClient } from "./HeraldClient.ts"
export type { ClientOptions } from "./HeraldClient.ts"
export { createClient, HeraldError } from "./Promise.ts"
export type { PromiseClient } from "./Promise.ts"
