/**
 * Path parameter schemas: an id is its type prefix plus a body of at most 64
 * URL-safe characters. A malformed id answers 400 `VALIDATION_FAILED` before
 * any lookup.
 */
import { Schema } from "effect"

const prefixedId = (prefix: string, identifier: string) =>
  Schema.String.check(Schema.isPattern(new RegExp(`^${prefix}_[0-9A-Za-z]{1,64}$`))).annotate({
    identifier,
    description: `An id starting \`${prefix}_\`.`
  })

export const TokenId = prefixedId("tok", "TokenId")
export const DeviceId = prefixedId("dev", "DeviceId")
