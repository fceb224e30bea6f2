export * from "./Common.ts"
export * from "./Identity.ts"
export * from "./Scope.ts"
