/**
 * Reply webhooks (webhooks/): registration and the replies prompts send. The
 * deliveries queue itself (webhooks/Deliveries.ts, its wake-ups reach this
 * process's worker) is the platform's.
 */
import { ReplyWebhooks } from "./ReplyWebhooks.ts"

export const WebhooksLayer = ReplyWebhooks.layerNoDeps
