/**
 * Sharing web apps with a team or family over HTTP with the typed client:
 * moving in and back, the audit entries, `GET /teams/{id}/apps`, the push
 * (and inbox item) the other members get unless `notify: false`; and the
 * apps other records name: notifications, prompts and their inbox items.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { eventually } from "../../../../test/support/eventually.ts"
import { makePerson, registerDevice, TestServerLayer } from "../../../../test/support/server.ts"
import { seedTeam } from "../../../../test/support/teams.ts"
import { appAudit, seedAppRoles, withClients } from "./appsSupport.ts"
import { sentNotification } from "../../../../test/support/notifications.ts"

const receiptsOf = (deviceId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ itemId: string }>`SELECT item_id FROM push_receipts WHERE device_id = ${deviceId}`)

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("sharing web apps", (it) => {
  it.effect("share moves an app into a team and back; audit app.shared / app.unshared; GET /teams/{id}/apps", () =>
    Effect.gen(function*() {
      const { member, owner, outsider, teamId } = yield* seedAppRoles
      const app = yield* member.agent.apps.create({ payload: { name: "Family board", url: "https://fam.example.test/" } })
      assert.strictEqual((yield* Effect.flip(owner.agent.apps.get({ params: { id: app.id } })))._tag, "NotFound")

      const shared = yield* member.agent.apps.share({ params: { id: app.id }, payload: { teamId, notify: false } })
      assert.deepStrictEqual({ ...shared.team! }, { id: teamId, name: "Test team" })
      assert.strictEqual(shared.addedBy, member.id)
      assert.strictEqual(shared.createdBy, member.id)
      const ownerView = yield* owner.agent.apps.get({ params: { id: app.id } })
      assert.strictEqual(ownerView.team?.id, teamId)
      assert.isFalse(ownerView.shareName)
      assert.isNull(ownerView.consentedAt)
      assert.deepStrictEqual((yield* owner.agent.apps.list()).items.map((a) => a.id), [app.id])
      assert.deepStrictEqual((yield* owner.agent.apps.teamApps({ params: { id: teamId } })).items.map((a) => a.id), [app.id])
      assert.strictEqual((yield* Effect.flip(outsider.agent.apps.teamApps({ params: { id: teamId } })))._tag, "NotFound")

      // Sharing again with the same team changes nothing and writes nothing.
      yield* member.agent.apps.share({ params: { id: app.id }, payload: { teamId, notify: false } })
      const back = yield* member.agent.apps.share({ params: { id: app.id }, payload: { teamId: null } })
      assert.isNull(back.team)
      assert.isNull(back.addedBy)
      assert.strictEqual((yield* Effect.flip(owner.agent.apps.get({ params: { id: app.id } })))._tag, "NotFound")
      assert.deepStrictEqual((yield* owner.agent.apps.teamApps({ params: { id: teamId } })).items, [])
      assert.deepStrictEqual((yield* appAudit(app.id)).map((e) => [e.teamId, e.action, e.actorUserId]), [
        [teamId, "app.shared", member.id],
        [teamId, "app.unshared", member.id]
      ])
    }))

  it.effect("moving between two teams writes app.unshared on the old and app.shared on the new; a foreign team is 404", () =>
    Effect.gen(function*() {
      const { member, outsider, teamId } = yield* seedAppRoles
      const { teamId: second } = yield* seedTeam({ owner: member, kind: "team" })
      const { teamId: foreign } = yield* seedTeam({ owner: outsider })
      const app = yield* member.agent.apps.create({ payload: { name: "Mover", url: "https://move.example.test/" } })
      yield* member.agent.apps.share({ params: { id: app.id }, payload: { teamId, notify: false } })
      const moved = yield* member.agent.apps.share({ params: { id: app.id }, payload: { teamId: second, notify: false } })
      assert.strictEqual(moved.team?.id, second)
      const refused = yield* Effect.flip(member.agent.apps.share({ params: { id: app.id }, payload: { teamId: foreign } }))
      assert.strictEqual(refused._tag, "NotFound")
      assert.strictEqual((yield* member.agent.apps.get({ params: { id: app.id } })).team?.id, second)
      // The move's two entries share one transaction (and instant): compared as a set.
      const entries = (yield* appAudit(app.id)).map((e) => `${e.teamId} ${e.action}`)
      assert.deepStrictEqual([...entries].sort(), [`${teamId} app.shared`, `${teamId} app.unshared`, `${second} app.shared`].sort())
    }))

  it.effect("a deleted team's apps go back to the people who added them", () =>
    Effect.gen(function*() {
      const { member, owner, teamId } = yield* seedAppRoles
      const app = yield* member.agent.apps.create({ payload: { name: "Kept", url: "https://kept.example.test/" } })
      yield* member.agent.apps.share({ params: { id: app.id }, payload: { teamId, notify: false } })
      const sql = yield* SqlClient.SqlClient
      yield* sql`DELETE FROM teams WHERE id = ${teamId}`
      const back = yield* member.agent.apps.get({ params: { id: app.id } })
      assert.isNull(back.team)
      assert.isNull(back.addedBy)
      assert.strictEqual((yield* Effect.flip(owner.agent.apps.get({ params: { id: app.id } })))._tag, "NotFound")
    }))

  it.effect("notify (default) tells the other members by push and an inbox item naming the app; notify false tells no one", () =>
    Effect.gen(function*() {
      const { admin, member, owner, teamId } = yield* seedAppRoles
      const ownerPhone = yield* registerDevice(owner, "owner-")
      const adminPhone = yield* registerDevice(admin, "admin-")
      const sharerPhone = yield* registerDevice(member, "sharer-")

      const quiet = yield* member.agent.apps.create({ payload: { name: "Quiet", url: "https://quiet.example.test/" } })
      yield* member.agent.apps.share({ params: { id: quiet.id }, payload: { teamId, notify: false } })
      // The push would be committed with the share: none is, so none can be sent.
      assert.deepStrictEqual(yield* receiptsOf(ownerPhone.id), [])
      assert.deepStrictEqual(yield* receiptsOf(adminPhone.id), [])

      const loud = yield* member.agent.apps.create({ payload: { name: "Loud", url: "https://loud.example.test/" } })
      yield* member.agent.apps.share({ params: { id: loud.id }, payload: { teamId } })
      for (const phone of [ownerPhone, adminPhone]) {
        const who = phone === ownerPhone ? owner : admin
        const sent = yield* eventually(
          Effect.map(who.app.devices.deliveries({ params: { id: phone.id } }), (r) => r.items),
          (items) => items.length === 1
        )
        assert.include(JSON.stringify(sent[0]!.payload), "member shared Loud")
      }
      assert.deepStrictEqual(yield* receiptsOf(sharerPhone.id), [], "the sharer is not told")
      assert.deepStrictEqual((yield* member.app.devices.deliveries({ params: { id: sharerPhone.id } })).items, [])

      const inbox = yield* owner.agent.inbox.list()
      assert.strictEqual(inbox.items.length, 1)
      assert.deepStrictEqual({ ...inbox.items[0]!.app! }, { id: loud.id, name: "Loud", origin: "https://loud.example.test", iconUrl: null })
      assert.deepStrictEqual((yield* owner.app.devices.deliveries({ params: { id: ownerPhone.id } })).items.length, 1)
    }))

  it.effect("notifications name an app the account can see: foreign or unknown 404; the inbox item carries its AppSummary", () =>
    Effect.gen(function*() {
      const { member, outsider, owner, teamId } = yield* seedAppRoles
      const mine = yield* owner.agent.apps.create({ payload: { name: "Mine", url: "https://mine.example.test/", iconUrl: "https://mine.example.test/i.png" } })
      const theirs = yield* outsider.agent.apps.create({ payload: { name: "Theirs", url: "https://theirs.example.test/" } })
      const teams = yield* member.agent.apps.create({ payload: { name: "Team app", url: "https://team.example.test/" } })
      yield* member.agent.apps.share({ params: { id: teams.id }, payload: { teamId, notify: false } })

      for (const appId of [theirs.id, "app_unknown0000000000000000"]) {
        const refused = yield* Effect.flip(owner.agent.notifications.create({ payload: { title: "t", body: "b", appId } }))
        assert.strictEqual(refused._tag, "NotFound", appId)
      }
      const sent = yield* sentNotification(owner.agent.notifications.create({ payload: { title: "With app", body: "b", appId: mine.id } }))
      assert.strictEqual(sent.notification.appId, mine.id)
      yield* sentNotification(owner.agent.notifications.create({ payload: { title: "Team app", body: "b", appId: teams.id } }))
      const plain = yield* sentNotification(owner.agent.notifications.create({ payload: { title: "No app", body: "b" } }))
      assert.isUndefined(plain.notification.appId)

      const items = (yield* owner.agent.inbox.list()).items
      assert.deepStrictEqual(items.map((i) => i.app?.id ?? null), [null, teams.id, mine.id])
      assert.deepStrictEqual({ ...items[2]!.app! }, { id: mine.id, name: "Mine", origin: "https://mine.example.test", iconUrl: "https://mine.example.test/i.png" })
      const detail = yield* owner.agent.inbox.get({ params: { id: `notification:${sent.notification.id}` } })
      assert.strictEqual(detail.app?.name, "Mine")

      // A deleted app: the item stays, its `app` reads null.
      yield* owner.agent.apps.remove({ params: { id: mine.id } })
      const after = (yield* owner.agent.inbox.list()).items
      assert.deepStrictEqual(after.map((i) => i.app?.id ?? null), [null, teams.id, null])
    }))

  it.effect("prompts take appId with the same check; the prompt's inbox item carries the app", () =>
    Effect.gen(function*() {
      const { outsider, owner } = yield* seedAppRoles
      const mine = yield* owner.agent.apps.create({ payload: { name: "Deploys", url: "https://deploy.example.test/" } })
      const theirs = yield* outsider.agent.apps.create({ payload: { name: "Theirs", url: "https://theirs.example.test/" } })
      const refused = yield* Effect.flip(owner.agent.interactions.create({
        payload: { kind: "approval", title: "Ship?", prompt: "Ship it?", appId: theirs.id }
      }))
      assert.strictEqual(refused._tag, "NotFound")
      const created = yield* owner.agent.interactions.create({
        payload: { kind: "approval", title: "Ship?", prompt: "Ship it?", appId: mine.id }
      })
      const item = yield* owner.agent.inbox.get({ params: { id: `interaction:${created.interaction.id}` } })
      assert.deepStrictEqual({ ...item.app! }, { id: mine.id, name: "Deploys", origin: "https://deploy.example.test", iconUrl: null })
    }))

  it.effect("an inbox item shows its app only while the recipient can see the app", () =>
    Effect.gen(function*() {
      // The account itself named the app, then it was taken back out of the team: the item no longer discloses it.
      const { member, owner, teamId } = yield* seedAppRoles
      const app = yield* member.agent.apps.create({ payload: { name: "Temp", url: "https://temp.example.test/" } })
      yield* member.agent.apps.share({ params: { id: app.id }, payload: { teamId, notify: false } })
      yield* sentNotification(owner.agent.notifications.create({ payload: { title: "t", body: "b", appId: app.id } }))
      assert.strictEqual((yield* owner.agent.inbox.list()).items[0]!.app?.id, app.id)
      yield* member.agent.apps.share({ params: { id: app.id }, payload: { teamId: null } })
      assert.isNull((yield* owner.agent.inbox.list()).items[0]!.app)
      const someoneElse = yield* withClients(yield* makePerson("else"))
      assert.strictEqual((yield* Effect.flip(someoneElse.agent.apps.get({ params: { id: app.id } })))._tag, "NotFound")
    }))
})
