/**
 * Bounds on everything a caller controls that the spec's Limits table does not
 * already fix. One place, so the docs and the code agree.
 */

/** Request bodies (decisions.md: 1 MiB for every route but mini-app publish). */
export const MAX_BODY_BYTES = 1024 * 1024
