/** spec Limits: concurrent live activities per device, interactive prompt cards included. */
import { ActivityCapacityExceeded } from "@herald/api"

export const DEVICE_CAPACITY = 5

/** 422 `ACTIVITY_CAPACITY_EXCEEDED`: no target device has room (a start, a replacing start, a prompt's card). */
export const capacityExceeded = new ActivityCapacityExceeded({
  error: `Every target device already shows ${DEVICE_CAPACITY} live activities.`,
  limit: DEVICE_CAPACITY
})
