/** Notifications (notifications/): the service over its repo and the app-access check; the rest is the platform's. */
import { Layer } from "effect"
import { AppAccess } from "../apps/AppAccess.ts"
import { Notifications } from "./Notifications.ts"
import { NotificationsRepo } from "./NotificationsRepo.ts"

export const NotificationsLayer = Notifications.layerNoDeps.pipe(
  Layer.provide(Layer.mergeAll(NotificationsRepo.layer, AppAccess.layer))
)
