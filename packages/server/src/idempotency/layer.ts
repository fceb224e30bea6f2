/** Idempotent creates (idempotency/): the stored answers and their replay, over their SQL. */
import { Idempotency } from "./Idempotency.ts"

export const IdempotencyLayer = Idempotency.layer
