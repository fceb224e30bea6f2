/**
 * What registering a browser checks of its Web Push subscription beyond the
 * contract's shapes: that the endpoint passes the outbound address rules as
 * far as they can be judged without DNS (every push judges it again after
 * resolving), and that `p256dh` is a point on P-256, which every payload is
 * encrypted to. A subscription failing either could never receive a push, so
 * it is refused at once with the field named.
 */
import type { WebPushSubscription } from "@herald/api"
import { Effect } from "effect"
import { createECDH } from "node:crypto"
import { checkUrl } from "../webhooks/Outbound.ts"
import type { OutboundPolicy } from "../webhooks/Outbound.ts"

export interface Issue {
  readonly path: string
  readonly message: string
}

/** The subscription's keys without base64 padding, as web-push and browsers write them. */
export const normalizedKeys = (subscription: WebPushSubscription) => ({
  p256dh: subscription.keys.p256dh.replace(/=+$/, ""),
  auth: subscription.keys.auth.replace(/=+$/, "")
})

/** Whether `p256dh` (base64url) is an uncompressed point on P-256. */
export const isP256Point = (p256dh: string): boolean => {
  try {
    const ecdh = createECDH("prime256v1")
    ecdh.generateKeys()
    ecdh.computeSecret(Buffer.from(p256dh, "base64url"))
    return true
  } catch {
    return false
  }
}

/** The issues of a subscription (paths as the request names them), none when it can be used. */
export const subscriptionIssues = (
  policy: OutboundPolicy,
  subscription: WebPushSubscription
): Effect.Effect<ReadonlyArray<Issue>> =>
  Effect.gen(function*() {
    const issues: Array<Issue> = []
    const endpoint = yield* Effect.result(checkUrl(policy, subscription.endpoint))
    if (endpoint._tag === "Failure") issues.push({ path: "body.subscription.endpoint", message: endpoint.failure })
    if (!isP256Point(normalizedKeys(subscription).p256dh)) {
      issues.push({ path: "body.subscription.keys.p256dh", message: "Expected a public key on the P-256 curve" })
    }
    return issues
  })
