import { Schema } from "effect"

/** The 22 scopes of the Scope enumeration, in the spec's order. */
export const Scopes = [
  "notifications:send",
  "interactions:create",
  "interactions:read",
  "activities:read",
  "activities:write",
  "services:read",
  "services:write",
  "devices:read",
  "events:read",
  "apps:read",
  "apps:write",
  "devices:write",
  "inbox:read",
  "inbox:write",
  "billing:read",
  "tokens:manage",
  "teams:read",
  "teams:write",
  "oncall:read",
  "oncall:write",
  "connectors:read",
  "connectors:write"
] as const

// An unknown scope name is answered with the list of valid ones (in `issues`).
export const Scope = Schema.Literals(Scopes).annotate({
  identifier: "Scope",
  message: `Unknown scope; the scopes are: ${Scopes.join(", ")}.`
})
export type Scope = typeof Scope.Type
