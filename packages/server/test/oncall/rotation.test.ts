/**
 * Rotation math, table-driven: hand-offs, DST changes, gaps and 30-minute zones. Instants are written
 * as UTC ISO strings; each case's name gives the local wall clock so the expectation can be checked by eye.
 */
import { describe, it } from "@effect/vitest"
import { rotation, walk } from "./rotationTables.ts"

describe("Rotation hand-offs", () => {
  it("hands off daily and weekly, members in order, wrapping", () =>
    walk([
      {
        name: "daily UTC from a hand-off",
        rotation: rotation("2026-01-05T09:00:00Z"),
        at: "2026-01-05T09:00:00Z",
        expected: [
          ["ann", "2026-01-05T09:00:00.000Z", "2026-01-06T09:00:00.000Z", 24],
          ["bob", "2026-01-06T09:00:00.000Z", "2026-01-07T09:00:00.000Z", 24],
          ["cy", "2026-01-07T09:00:00.000Z", "2026-01-08T09:00:00.000Z", 24],
          ["ann", "2026-01-08T09:00:00.000Z", "2026-01-09T09:00:00.000Z", 24],
          ["bob", "2026-01-09T09:00:00.000Z", "2026-01-10T09:00:00.000Z", 24]
        ]
      },
      {
        name: "daily, `at` one millisecond before a hand-off is still the earlier shift",
        rotation: rotation("2026-01-05T09:00:00Z"),
        at: "2026-01-07T08:59:59.999Z",
        expected: [
          ["bob", "2026-01-06T09:00:00.000Z", "2026-01-07T09:00:00.000Z", 24],
          ["cy", "2026-01-07T09:00:00.000Z", "2026-01-08T09:00:00.000Z", 24]
        ]
      },
      {
        name: "weekly UTC (Mondays 09:00), from mid-shift",
        rotation: rotation("2026-01-05T09:00:00Z", { period: "weekly" }),
        at: "2026-01-20T12:00:00Z",
        expected: [
          ["cy", "2026-01-19T09:00:00.000Z", "2026-01-26T09:00:00.000Z", 168],
          ["ann", "2026-01-26T09:00:00.000Z", "2026-02-02T09:00:00.000Z", 168],
          ["bob", "2026-02-02T09:00:00.000Z", "2026-02-09T09:00:00.000Z", 168],
          ["cy", "2026-02-09T09:00:00.000Z", "2026-02-16T09:00:00.000Z", 168]
        ]
      },
      {
        name: "two members alternate",
        rotation: rotation("2026-01-05T09:00:00Z", { members: ["ann", "bob"] }),
        at: "2026-01-05T09:00:00Z",
        expected: [
          ["ann", "2026-01-05T09:00:00.000Z", "2026-01-06T09:00:00.000Z", 24],
          ["bob", "2026-01-06T09:00:00.000Z", "2026-01-07T09:00:00.000Z", 24],
          ["ann", "2026-01-07T09:00:00.000Z", "2026-01-08T09:00:00.000Z", 24]
        ]
      },
      {
        name: "one member holds every shift",
        rotation: rotation("2026-01-05T09:00:00Z", { members: ["ann"] }),
        at: "2026-01-06T10:00:00Z",
        expected: [
          ["ann", "2026-01-06T09:00:00.000Z", "2026-01-07T09:00:00.000Z", 24],
          ["ann", "2026-01-07T09:00:00.000Z", "2026-01-08T09:00:00.000Z", 24]
        ]
      },
      {
        name: "hand-off at 00:00 and at 23:59",
        rotation: rotation("2026-01-05T00:00:00Z", { handoffAt: "00:00" }),
        at: "2026-01-05T00:00:00Z",
        expected: [
          ["ann", "2026-01-05T00:00:00.000Z", "2026-01-06T00:00:00.000Z", 24],
          ["bob", "2026-01-06T00:00:00.000Z", "2026-01-07T00:00:00.000Z", 24]
        ]
      },
      {
        name: "hand-off at 23:59",
        rotation: rotation("2026-01-05T23:59:00Z", { handoffAt: "23:59" }),
        at: "2026-01-06T12:00:00Z",
        expected: [
          ["ann", "2026-01-05T23:59:00.000Z", "2026-01-06T23:59:00.000Z", 24],
          ["bob", "2026-01-06T23:59:00.000Z", "2026-01-07T23:59:00.000Z", 24]
        ]
      }
    ]))

  it("gives a short first shift when startsAt is not at a hand-off", () =>
    walk([
      {
        name: "daily, startsAt before the day's hand-off: first shift ends at it",
        rotation: rotation("2026-01-05T07:00:00Z"),
        at: "2026-01-05T07:00:00Z",
        expected: [
          ["ann", "2026-01-05T07:00:00.000Z", "2026-01-05T09:00:00.000Z", 2],
          ["bob", "2026-01-05T09:00:00.000Z", "2026-01-06T09:00:00.000Z", 24],
          ["cy", "2026-01-06T09:00:00.000Z", "2026-01-07T09:00:00.000Z", 24]
        ]
      },
      {
        name: "daily, startsAt after the day's hand-off: first shift ends at the next day's",
        rotation: rotation("2026-01-05T15:00:00Z"),
        at: "2026-01-05T15:00:00Z",
        expected: [
          ["ann", "2026-01-05T15:00:00.000Z", "2026-01-06T09:00:00.000Z", 18],
          ["bob", "2026-01-06T09:00:00.000Z", "2026-01-07T09:00:00.000Z", 24]
        ]
      },
      {
        name: "weekly, startsAt Wednesday after 09:00: hands off Wednesdays, first shift under a week",
        rotation: rotation("2026-01-07T15:00:00Z", { period: "weekly" }),
        at: "2026-01-08T00:00:00Z",
        expected: [
          ["ann", "2026-01-07T15:00:00.000Z", "2026-01-14T09:00:00.000Z", 162],
          ["bob", "2026-01-14T09:00:00.000Z", "2026-01-21T09:00:00.000Z", 168]
        ]
      },
      {
        name: "weekly, startsAt Wednesday before 09:00: the first hand-off is that day",
        rotation: rotation("2026-01-07T08:00:00Z", { period: "weekly" }),
        at: "2026-01-07T08:30:00Z",
        expected: [
          ["ann", "2026-01-07T08:00:00.000Z", "2026-01-07T09:00:00.000Z", 1],
          ["bob", "2026-01-07T09:00:00.000Z", "2026-01-14T09:00:00.000Z", 168]
        ]
      },
      {
        name: "startsAt counts on the local date: 23:30 New York is the next day in UTC",
        // 2026-01-05 23:30 EST; hand-off 09:00 EST = 14:00Z on Jan 6.
        rotation: rotation("2026-01-06T04:30:00Z", { timezone: "America/New_York" }),
        at: "2026-01-06T04:30:00Z",
        expected: [
          ["ann", "2026-01-06T04:30:00.000Z", "2026-01-06T14:00:00.000Z", 9.5],
          ["bob", "2026-01-06T14:00:00.000Z", "2026-01-07T14:00:00.000Z", 24]
        ]
      }
    ]))

  it("hands off at the same wall-clock time across DST changes (23- and 25-hour shifts)", () =>
    walk([
      {
        name: "Europe/Berlin, spring forward Sunday 2026-03-29 (09:00 CET = 08:00Z, 09:00 CEST = 07:00Z)",
        rotation: rotation("2026-03-01T08:00:00Z", { timezone: "Europe/Berlin" }),
        at: "2026-03-27T12:00:00Z",
        expected: [
          ["cy", "2026-03-27T08:00:00.000Z", "2026-03-28T08:00:00.000Z", 24],
          ["ann", "2026-03-28T08:00:00.000Z", "2026-03-29T07:00:00.000Z", 23],
          ["bob", "2026-03-29T07:00:00.000Z", "2026-03-30T07:00:00.000Z", 24],
          ["cy", "2026-03-30T07:00:00.000Z", "2026-03-31T07:00:00.000Z", 24]
        ]
      },
      {
        name: "Europe/Berlin, fall back Sunday 2026-10-25 (09:00 CEST = 07:00Z, 09:00 CET = 08:00Z)",
        rotation: rotation("2026-10-01T07:00:00Z", { timezone: "Europe/Berlin" }),
        at: "2026-10-24T12:00:00Z",
        expected: [
          ["cy", "2026-10-24T07:00:00.000Z", "2026-10-25T08:00:00.000Z", 25],
          ["ann", "2026-10-25T08:00:00.000Z", "2026-10-26T08:00:00.000Z", 24]
        ]
      },
      {
        name: "America/New_York, spring forward Sunday 2026-03-08 (09:00 EST = 14:00Z, 09:00 EDT = 13:00Z)",
        rotation: rotation("2026-03-01T14:00:00Z", { timezone: "America/New_York" }),
        at: "2026-03-07T12:00:00Z",
        expected: [
          ["cy", "2026-03-06T14:00:00.000Z", "2026-03-07T14:00:00.000Z", 24],
          ["ann", "2026-03-07T14:00:00.000Z", "2026-03-08T13:00:00.000Z", 23],
          ["bob", "2026-03-08T13:00:00.000Z", "2026-03-09T13:00:00.000Z", 24]
        ]
      },
      {
        name: "America/New_York, fall back Sunday 2026-11-01 (09:00 EDT = 13:00Z, 09:00 EST = 14:00Z)",
        rotation: rotation("2026-10-25T13:00:00Z", { timezone: "America/New_York" }),
        at: "2026-10-31T13:00:00Z",
        expected: [
          ["ann", "2026-10-31T13:00:00.000Z", "2026-11-01T14:00:00.000Z", 25],
          ["bob", "2026-11-01T14:00:00.000Z", "2026-11-02T14:00:00.000Z", 24]
        ]
      },
      {
        name: "Europe/Berlin weekly, Mondays 10:00 across the March change",
        rotation: rotation("2026-03-23T09:00:00Z", { timezone: "Europe/Berlin", period: "weekly", handoffAt: "10:00" }),
        at: "2026-03-23T09:00:00Z",
        expected: [
          ["ann", "2026-03-23T09:00:00.000Z", "2026-03-30T08:00:00.000Z", 167],
          ["bob", "2026-03-30T08:00:00.000Z", "2026-04-06T08:00:00.000Z", 168]
        ]
      },
      {
        name: "America/New_York weekly, Fridays 17:00 across the November change",
        // Fri 2026-10-30 17:00 EDT = 21:00Z; Fri 2026-11-06 17:00 EST = 22:00Z.
        rotation: rotation("2026-10-30T21:00:00Z", { timezone: "America/New_York", period: "weekly", handoffAt: "17:00" }),
        at: "2026-11-03T00:00:00Z",
        expected: [
          ["ann", "2026-10-30T21:00:00.000Z", "2026-11-06T22:00:00.000Z", 169],
          ["bob", "2026-11-06T22:00:00.000Z", "2026-11-13T22:00:00.000Z", 168]
        ]
      }
    ]))

  it("hands off at the first valid instant after a spring-forward gap, at the first occurrence in a repeat", () =>
    walk([
      {
        name: "America/New_York 02:30 on 2026-03-08 does not exist: hands off at 03:00 EDT (07:00Z)",
        rotation: rotation("2026-03-05T07:30:00Z", { timezone: "America/New_York", handoffAt: "02:30" }),
        at: "2026-03-05T07:30:00Z",
        expected: [
          ["ann", "2026-03-05T07:30:00.000Z", "2026-03-06T07:30:00.000Z", 24],
          ["bob", "2026-03-06T07:30:00.000Z", "2026-03-07T07:30:00.000Z", 24],
          ["cy", "2026-03-07T07:30:00.000Z", "2026-03-08T07:00:00.000Z", 23.5],
          ["ann", "2026-03-08T07:00:00.000Z", "2026-03-09T06:30:00.000Z", 23.5],
          ["bob", "2026-03-09T06:30:00.000Z", "2026-03-10T06:30:00.000Z", 24]
        ]
      },
      {
        name: "Europe/Berlin 02:30 on 2026-03-29 does not exist: hands off at 03:00 CEST (01:00Z)",
        rotation: rotation("2026-03-27T01:30:00Z", { timezone: "Europe/Berlin", handoffAt: "02:30" }),
        at: "2026-03-28T12:00:00Z",
        expected: [
          ["bob", "2026-03-28T01:30:00.000Z", "2026-03-29T01:00:00.000Z", 23.5],
          ["cy", "2026-03-29T01:00:00.000Z", "2026-03-30T00:30:00.000Z", 23.5],
          ["ann", "2026-03-30T00:30:00.000Z", "2026-03-31T00:30:00.000Z", 24]
        ]
      },
      {
        name: "America/New_York 01:30 on 2026-11-01 happens twice: hands off at 01:30 EDT (05:30Z)",
        rotation: rotation("2026-10-30T05:30:00Z", { timezone: "America/New_York", handoffAt: "01:30" }),
        at: "2026-10-31T05:30:00Z",
        expected: [
          ["bob", "2026-10-31T05:30:00.000Z", "2026-11-01T05:30:00.000Z", 24],
          ["cy", "2026-11-01T05:30:00.000Z", "2026-11-02T06:30:00.000Z", 25]
        ]
      },
      {
        name: "Europe/Berlin 02:30 on 2026-10-25 happens twice: hands off at 02:30 CEST (00:30Z)",
        rotation: rotation("2026-10-24T00:30:00Z", { timezone: "Europe/Berlin", handoffAt: "02:30" }),
        at: "2026-10-24T00:30:00Z",
        expected: [
          ["ann", "2026-10-24T00:30:00.000Z", "2026-10-25T00:30:00.000Z", 24],
          ["bob", "2026-10-25T00:30:00.000Z", "2026-10-26T01:30:00.000Z", 25]
        ]
      }
    ]))

  it("works in zones with 30-minute offsets", () =>
    walk([
      {
        name: "Asia/Kolkata (+05:30, no DST): 09:00 IST = 03:30Z",
        rotation: rotation("2026-01-05T03:30:00Z", { timezone: "Asia/Kolkata" }),
        at: "2026-01-05T03:30:00Z",
        expected: [
          ["ann", "2026-01-05T03:30:00.000Z", "2026-01-06T03:30:00.000Z", 24],
          ["bob", "2026-01-06T03:30:00.000Z", "2026-01-07T03:30:00.000Z", 24]
        ]
      },
      {
        name: "Asia/Kolkata weekly, 127 weeks after startsAt (Mon 2024-01-01 09:00 IST)",
        rotation: rotation("2024-01-01T03:30:00Z", { timezone: "Asia/Kolkata", period: "weekly" }),
        // Mon 2026-06-15 05:30 IST: still the shift that began Mon 2026-06-08 09:00 IST.
        at: "2026-06-15T00:00:00Z",
        expected: [
          ["bob", "2026-06-08T03:30:00.000Z", "2026-06-15T03:30:00.000Z", 168],
          ["cy", "2026-06-15T03:30:00.000Z", "2026-06-22T03:30:00.000Z", 168]
        ]
      },
      {
        name: "Australia/Adelaide, DST ends Sun 2026-04-05 (09:00 ACDT +10:30 = 22:30Z, ACST +09:30 = 23:30Z)",
        rotation: rotation("2026-04-01T22:30:00Z", { timezone: "Australia/Adelaide" }),
        at: "2026-04-01T22:30:00Z",
        expected: [
          ["ann", "2026-04-01T22:30:00.000Z", "2026-04-02T22:30:00.000Z", 24],
          ["bob", "2026-04-02T22:30:00.000Z", "2026-04-03T22:30:00.000Z", 24],
          ["cy", "2026-04-03T22:30:00.000Z", "2026-04-04T23:30:00.000Z", 25],
          ["ann", "2026-04-04T23:30:00.000Z", "2026-04-05T23:30:00.000Z", 24]
        ]
      },
      {
        name: "Australia/Adelaide, DST starts Sun 2026-10-04",
        rotation: rotation("2026-10-01T23:30:00Z", { timezone: "Australia/Adelaide" }),
        at: "2026-10-01T23:30:00Z",
        expected: [
          ["ann", "2026-10-01T23:30:00.000Z", "2026-10-02T23:30:00.000Z", 24],
          ["bob", "2026-10-02T23:30:00.000Z", "2026-10-03T22:30:00.000Z", 23],
          ["cy", "2026-10-03T22:30:00.000Z", "2026-10-04T22:30:00.000Z", 24]
        ]
      },
      {
        name: "Australia/Lord_Howe, 30-minute DST starts Sun 2026-10-04 (09:00 +10:30 = 22:30Z, +11 = 22:00Z)",
        rotation: rotation("2026-10-02T22:30:00Z", { timezone: "Australia/Lord_Howe" }),
        at: "2026-10-02T22:30:00Z",
        expected: [
          ["ann", "2026-10-02T22:30:00.000Z", "2026-10-03T22:00:00.000Z", 23.5],
          ["bob", "2026-10-03T22:00:00.000Z", "2026-10-04T22:00:00.000Z", 24]
        ]
      },
      {
        name: "Australia/Lord_Howe, 30-minute DST ends Sun 2026-04-05",
        rotation: rotation("2026-04-03T22:00:00Z", { timezone: "Australia/Lord_Howe" }),
        at: "2026-04-03T22:00:00Z",
        expected: [
          ["ann", "2026-04-03T22:00:00.000Z", "2026-04-04T22:30:00.000Z", 24.5],
          ["bob", "2026-04-04T22:30:00.000Z", "2026-04-05T22:30:00.000Z", 24]
        ]
      },
      {
        name: "Australia/Lord_Howe 02:15 on 2026-10-04 falls in the 02:00-02:30 gap: hands off at 02:30 (15:30Z)",
        rotation: rotation("2026-10-02T15:45:00Z", { timezone: "Australia/Lord_Howe", handoffAt: "02:15" }),
        at: "2026-10-02T15:45:00Z",
        expected: [
          ["ann", "2026-10-02T15:45:00.000Z", "2026-10-03T15:30:00.000Z", 23.75],
          ["bob", "2026-10-03T15:30:00.000Z", "2026-10-04T15:15:00.000Z", 23.75],
          ["cy", "2026-10-04T15:15:00.000Z", "2026-10-05T15:15:00.000Z", 24]
        ]
      }
    ]))
})
