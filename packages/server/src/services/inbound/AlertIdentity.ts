/**
 * The collapse id of an alert's pushes, derived from its service and the
 * sender's alert key: every firing push of the alert carries it (a repeat
 * replaces the last in the tray), and the removal command a `resolved`
 * delivery sends names it. A digest, so a key of any shape fits APNs' 64 bytes
 * and two services' keys never meet.
 */
import { createHash } from "node:crypto"

export const alertCollapseId = (serviceId: string, alertKey: string): string =>
  `alr_${createHash("sha256").update(`${serviceId}\u0000${alertKey}`).digest("base64url").slice(0, 32)}`
