/**
 * The floor of the push fan-out bench (fanout.ts): the same pushes Herald drained, sent with `apns2` and
 * `firebase-admin` (its messaging `send`) in a plain loop, `concurrency` in flight (Herald's
 * HERALD_PUSH_CONCURRENCY), against the same fakes (fanout-fakes.ts). Nothing durable: no database, no
 * receipts, no retries. Prints one JSON line: `FloorResult`.
 *
 * Pointing the libraries at loopback: apns2 takes a `host` (always port 443: the fake listens there);
 * firebase-admin has no host override for messaging, so its `httpAgent` app option carries an agent whose DNS
 * `lookup` answers the fake's address for fcm.googleapis.com (the fake's certificate names that host, so TLS
 * is verified as in production). Its credential answers a fixed access token the fake accepts: the token
 * exchange happens once an hour in production, nothing a drain rate would see.
 *
 * argv: the path of a JSON `FloorOptions`. The CA is trusted through NODE_EXTRA_CA_CERTS.
 */
import { ApnsClient, Notification } from "apns2"
import { initializeApp } from "firebase-admin/app"
import { getMessaging } from "firebase-admin/messaging"
import { readFileSync } from "node:fs"
import * as https from "node:https"
import type { LookupFunction } from "node:net"

export interface FloorOptions {
  readonly apnsAddress: string
  readonly fcmAddress: string
  readonly apnsKey: string
  readonly keyId: string
  readonly teamId: string
  readonly topic: string
  readonly projectId: string
  readonly fixedToken: string
  readonly iosTokens: ReadonlyArray<string>
  readonly androidTokens: ReadonlyArray<string>
  /** The notifications Herald sent, in its order: each goes to every device. */
  readonly notificationIds: ReadonlyArray<string>
  readonly title: string
  readonly body: string
  readonly url: string
  readonly concurrency: number
}

export interface FloorResult {
  readonly ms: number
  readonly accepted: number
  readonly failed: number
  /** CPU time of this process while sending (user + system). */
  readonly cpuMs: number
  readonly rssPeakMb: number
}

const o = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as FloorOptions

const apns = new ApnsClient({ team: o.teamId, keyId: o.keyId, signingKey: o.apnsKey, defaultTopic: o.topic, host: o.apnsAddress })

const lookup: LookupFunction = (_hostname, options, callback) =>
  options.all === true
    ? (callback as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address: o.fcmAddress, family: 4 }])
    : callback(null, o.fcmAddress, 4)
const app = initializeApp({
  credential: { getAccessToken: () => Promise.resolve({ access_token: o.fixedToken, expires_in: 3600 }) },
  httpAgent: new https.Agent({ keepAlive: true, lookup }),
  projectId: o.projectId
})
const messaging = getMessaging(app)

// The same payloads Herald's alerts carry (push/Alerts.ts): title, body, sound, the notification's ref and link.
const sendApns = (token: string, id: string) =>
  apns.send(new Notification(token, {
    type: "alert",
    priority: 10,
    aps: { alert: { title: o.title, body: o.body }, sound: "default" },
    data: { herald: { ref: `notification:${id}`, url: o.url } },
    collapseId: id
  }))
const sendFcm = (token: string, id: string) =>
  messaging.send({
    token,
    notification: { title: o.title, body: o.body },
    data: { ref: `notification:${id}`, url: o.url },
    android: { priority: "high", collapseKey: id }
  })

const pushes: Array<() => Promise<unknown>> = []
for (const id of o.notificationIds) {
  for (const token of o.iosTokens) pushes.push(() => sendApns(token, id))
  for (const token of o.androidTokens) pushes.push(() => sendFcm(token, id))
}

let rssPeak = process.memoryUsage.rss()
const sampler = setInterval(() => {
  rssPeak = Math.max(rssPeak, process.memoryUsage.rss())
}, 100)

let next = 0
let accepted = 0
let failed = 0
const worker = async () => {
  while (next < pushes.length) {
    const push = pushes[next++]!
    try {
      await push()
      accepted += 1
    } catch {
      failed += 1
    }
  }
}
const started = performance.now()
const cpuBefore = process.cpuUsage()
await Promise.all(Array.from({ length: o.concurrency }, worker))
const ms = performance.now() - started
const cpu = process.cpuUsage(cpuBefore)
clearInterval(sampler)
rssPeak = Math.max(rssPeak, process.memoryUsage.rss())
await apns.close()
console.log(JSON.stringify({ ms, accepted, failed, cpuMs: (cpu.user + cpu.system) / 1000, rssPeakMb: rssPeak / 2 ** 20 } satisfies FloorResult))
process.exit(0)
