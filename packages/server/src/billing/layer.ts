/** Billing (billing/): usage and limits over their SQL; the rate limiter it reads is the platform's. */
import { Billing } from "./Billing.ts"

export const BillingLayer = Billing.layer
