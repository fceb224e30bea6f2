/**
 * The methods each known path answers, for 405 `METHOD_NOT_ALLOWED` and its
 * `Allow` header: read from the route table (Routes.ts), which matches as the
 * router does.
 */
import { routes } from "./Routes.ts"

export { opsRoutes } from "./Routes.ts"

/** A request URL to the methods its routes take, or undefined for an unknown path. */
export const allowedMethods = (url: string): ReadonlyArray<string> | undefined => routes.methodsOf(url)
