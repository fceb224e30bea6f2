/**
 * A person's console with something on every page, made the way it happens
 * in use — the operator's code makes the people (test/support/serverClients.ts personOn), the Person API their phones
 * and tokens, their agents (the Agent API) notify, ask, start live
 * activities, make a family with an invite and an on-call group, and page
 * it. Used by the accessibility test (pages with content, not empty states)
 * and by the screenshot script (scripts/console/screenshots.ts).
 */
import { HeraldClient, HeraldPersonClient, isNotification } from "@herald/client"
import { Effect } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { personOn } from "../../support/serverClients.ts"

export interface Sample {
  readonly person: { readonly id: string; readonly email: string; readonly name: string; readonly session: string }
  readonly promptId: string
  readonly choicesPromptId: string
  readonly familyId: string
  readonly inviteUrl: string
  readonly inviteCode: string
  readonly installUrl: string
  readonly pageId: string
}

const person = (name: string, email: string, cliEnv: Record<string, string>) =>
  Effect.map(personOn(cliEnv, { email, name }), ({ id, session }) => ({ id, email, name, session }))

const createSha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex")

/** A one-file web mini-app's archive, published by `publisherId` (the manifest rules of POST /mini-apps/publish). */
const miniAppArchive = (publisherId: string) => {
  const page = Buffer.from("<!doctype html><title>Grocery list</title><h1>Grocery list</h1>", "utf8")
  return {
    manifest: {
      schemaVersion: 1,
      appId: "grocery-list",
      name: "Grocery list",
      version: "1.2.0",
      publisher: { id: publisherId, name: "Ada Lovelace" },
      format: "web",
      runtime: "web-1",
      entryPoint: "index.html",
      files: [{ path: "index.html", size: page.byteLength, sha256: createSha256(page), mediaType: "text/html" }],
      capabilities: [],
      ageRating: 4,
      commerce: "none"
    },
    files: [{ path: "index.html", contentBase64: page.toString("base64") }]
  }
}

/**
 * Seeds Ada's console on the server at `baseUrl` (`cliEnv` reaches its database). Addresses are
 * unique per call, so several calls can share one database, unless `plainAddresses` (a database
 * of its own: `ada@example.test`, as screenshots should show).
 */
export const seedSample = (baseUrl: string, cliEnv: Record<string, string>, options: { readonly plainAddresses?: boolean } = {}) =>
  Effect.gen(function*() {
    const suffix = options.plainAddresses === true ? "" : `-${randomBytes(3).toString("hex")}`
    const ada = yield* person("Ada Lovelace", `ada${suffix}@example.test`, cliEnv)
    const charles = yield* person("Charles Babbage", `charles${suffix}@example.test`, cliEnv)
    const app = yield* Effect.provide(Effect.service(HeraldPersonClient), HeraldPersonClient.layer({ baseUrl, token: ada.session, retries: 0 }))
    const charlesApp = yield* Effect.provide(Effect.service(HeraldPersonClient), HeraldPersonClient.layer({ baseUrl, token: charles.session, retries: 0 }))

    // Her phones (the sandbox provider takes them); the Android one shows live activities.
    yield* app.devices.register({ payload: { platform: "ios", deviceName: "Ada's iPhone", pushToken: `sample-ios${suffix}` } })
    yield* app.devices.register({ payload: { platform: "android", deviceName: "Ada's Pixel", pushToken: `sample-android${suffix}`, liveActivitiesCapable: true } })

    const { secret } = yield* app.tokens.create({
      payload: {
        name: "Release bot",
        scopes: ["notifications:send", "interactions:create", "interactions:read", "activities:write", "teams:read", "teams:write", "oncall:read", "oncall:write", "apps:write"]
      }
    })
    yield* app.tokens.create({ payload: { name: "Home automation", scopes: ["notifications:send"] } })
    const agent = yield* Effect.provide(Effect.service(HeraldClient), HeraldClient.layer({ baseUrl, token: secret, retries: 0 }))

    // The inbox: notifications, one read; prompts, one answered.
    const backup = yield* agent.notifications.create({ payload: { title: "Nightly backup done", body: "412 GB in 38 minutes; verified." } })
    if (isNotification(backup)) yield* app.inbox.read({ params: { id: `notification:${backup.notification.id}` } })
    yield* agent.notifications.create({ payload: { title: "Build finished", body: "main is green: 1,204 tests passed in 6 min 12 s." } })
    const answered = yield* agent.interactions.create({ payload: { kind: "yes_no", title: "Is the staging database current?", prompt: "Restored from last night's backup at 02:10." } })
    yield* app.interactions.answer({ params: { id: answered.interaction.id }, payload: { status: "yes" } })
    const choices = yield* agent.interactions.create({
      payload: { kind: "reply", title: "Where to deploy 1.4.2?", prompt: "The release candidate passed every check.", choices: ["Staging", "Production", "Both"] }
    })
    const prompt = yield* agent.interactions.create({
      payload: {
        kind: "approval",
        title: "Deploy to production?",
        prompt: "Release 1.4.2 to eu-west: 14 commits, 2 migrations (0041_orders, 0042_users). Rollback plan: redeploy 1.4.1.",
        expiresInSeconds: 3600
      }
    })

    // Live activities, one per layout.
    yield* agent.activities.start({ payload: { key: "deploy", props: { title: "Deploying 1.4.2", subtitle: "eu-west", status: "Migrating", detail: "0042_users", progress: 0.6, layout: "standard" } } })
    yield* agent.activities.start({ payload: { key: "tests", props: { title: "Test suite", status: "812 / 1,204", progress: 0.67, layout: "ring" } } })
    yield* agent.activities.start({
      payload: { key: "release", props: { title: "Release train", layout: "steps", status: "Step 2 of 4", steps: ["Build", "Test", "Canary", "Rollout"], progress: 0.5 } }
    })

    // A family with Charles, an invite waiting, an on-call group and an open page.
    const family = yield* agent.teams.create({ payload: { kind: "family", name: "The Lovelaces" } })
    const forCharles = yield* agent.teamInvites.create({ params: { id: family.id }, payload: { email: charles.email } })
    yield* charlesApp.invites.accept({ payload: { code: forCharles.code } })
    const invite = yield* agent.teamInvites.create({ params: { id: family.id }, payload: { email: `byron${suffix}@example.test` } })
    const group = yield* agent.oncall.create({
      params: { id: family.id },
      payload: {
        name: "House alarms",
        rotation: { members: [ada.id, charles.id], period: "weekly", handoffAt: "09:00", timezone: "UTC", startsAt: new Date(Date.now() - 60_000).toISOString() },
        escalation: [{ afterMinutes: 10, target: "next" }, { afterMinutes: 30, target: "group" }]
      }
    })
    const paged = yield* agent.pages.create({
      params: { groupId: group.id },
      payload: { title: "Basement flooding", body: "The sump pump alarm went off at 03:12." }
    })

    // A mini-app she published: its installUrl is what the phone app opens.
    const published = yield* Effect.promise(async () => {
      const response = await fetch(`${baseUrl}/api/agent/mini-apps/publish`, {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
        body: JSON.stringify(miniAppArchive(ada.id))
      })
      const body = await response.json() as { installUrl?: string }
      if (response.status !== 201 || typeof body.installUrl !== "string") throw new Error(`publish answered ${response.status}: ${JSON.stringify(body)}`)
      return body as { installUrl: string }
    })

    return {
      person: ada,
      promptId: prompt.interaction.id,
      choicesPromptId: choices.interaction.id,
      familyId: family.id,
      inviteUrl: invite.url,
      inviteCode: invite.code,
      installUrl: published.installUrl,
      pageId: paged.page.id
    } satisfies Sample
  })
