/**
 * The pure half of inbound deliveries (services/inbound/): the template
 * grammar the contract enforces and the renderer, detection by header and
 * shape, the severity table, and the payload bound. The HTTP half, with each
 * sender's fixture, is test/http/inboundSenders.test.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import { templateProblem } from "@herald/api"
import { INBOUND_MAX_PAYLOAD_BYTES } from "../../src/config/Limits.ts"
import { mediaOf, parseBody } from "../../src/services/inbound/Body.ts"
import { detect, shapeOf } from "../../src/services/inbound/Detect.ts"
import type { InboundRequest } from "../../src/services/inbound/Inbound.ts"
import { boundPayload, priorityOf, Refusal, stateOf } from "../../src/services/inbound/Inbound.ts"
import { mapDelivery } from "../../src/services/inbound/Mapping.ts"
import { render } from "../../src/services/inbound/Template.ts"

const request = (text: string, headers: Record<string, string> = {}): InboundRequest => ({
  contentType: headers["content-type"],
  headers,
  text
})

describe("inbound mapping", () => {
  it("templates: well-formed paths pass, anything else names its problem", () => {
    for (const ok of ["plain text", "{{a}}", "{{ a.b[0].c }} and {{x}}", "{{[0].id}}", "{{labels[\"app.kubernetes.io/name\"]}}", "{ not a placeholder }"]) {
      assert.isUndefined(templateProblem(ok), ok)
    }
    for (const bad of ["{{", "}}", "{{}}", "{{a b}}", "{{a..b}}", "{{a}", "{{a.[0]}}", "{{a}}".repeat(21), `{{${Array(17).fill("a").join(".")}}}`]) {
      assert.isString(templateProblem(bad), bad)
    }
  })

  it("render: values by path, missing ones empty, objects as JSON; no expression is evaluated", () => {
    const data = { a: { b: [{ c: "deep" }, 2] }, n: 0, t: true, o: { x: 1 }, "odd.key": "q", list: [1, 2] }
    assert.strictEqual(render("{{a.b[0].c}}|{{a.b[1]}}|{{n}}|{{t}}|{{o}}|{{list}}|{{[\"odd.key\"]}}", data), "deep|2|0|true|{\"x\":1}|[1,2]|q")
    assert.strictEqual(render("[{{missing.path}}][{{a.b[9]}}][{{a.b.c}}]", data), "[][][]")
    assert.strictEqual(render("{{constructor}}{{__proto__}}{{toString}}", data), "")
    assert.strictEqual(render("{{x}}", [{ id: 1 }]), "")
    assert.strictEqual(render("{{[0].id}}", [{ id: 1 }]), "1")
  })

  it("detection: the sender's header first, then the media type, then the JSON's shape", () => {
    const json = (value: unknown, headers: Record<string, string> = {}) => {
      const req = request(JSON.stringify(value), { "content-type": "application/json", ...headers })
      const body = parseBody(req, mediaOf(req.contentType))
      return body instanceof Refusal ? "refused" : detect(req, body, "json", null)
    }
    assert.strictEqual(json({ body: "x" }, { "x-github-event": "push" }), "github")
    assert.strictEqual(json({}, { "x-gitlab-event": "Push Hook" }), "gitlab")
    assert.strictEqual(json({}, { "sentry-hook-resource": "issue" }), "sentry")
    assert.strictEqual(shapeOf({ receiver: "r", status: "firing", alerts: [], orgId: 1 }), "grafana")
    assert.strictEqual(shapeOf({ receiver: "r", status: "firing", alerts: [], version: "4", groupKey: "k" }), "alertmanager")
    assert.strictEqual(shapeOf({ heartbeat: null, monitor: null, msg: "test" }), "uptime-kuma")
    assert.strictEqual(shapeOf({ object_kind: "push" }), "gitlab")
    assert.strictEqual(shapeOf({}), "herald")
    assert.strictEqual(shapeOf({ title: "t" }), "herald")
    assert.strictEqual(shapeOf({ body: "x", anything: 1 }), "herald")
    assert.strictEqual(shapeOf({ title: "t", message: "m" }), "json")
    assert.strictEqual(shapeOf([1]), "json")
    assert.strictEqual(mediaOf("Application/JSON; charset=utf-8"), "json")
    assert.strictEqual(mediaOf("application/vnd.api+json"), "json")
    assert.strictEqual(mediaOf("application/yaml"), "text")
    assert.strictEqual(mediaOf("multipart/form-data; boundary=x"), "binary")
    assert.strictEqual(mediaOf(undefined), "none")
    // No type declared: JSON when it parses, else text.
    assert.deepStrictEqual(parseBody(request("{\"body\":\"x\"}"), "none"), { kind: "json", value: { body: "x" } })
    assert.deepStrictEqual(parseBody(request("{oops"), "none"), { kind: "text", text: "{oops" })
    // `curl -d '{…}'` (a form type on JSON) is read as the JSON it is.
    assert.deepStrictEqual(parseBody(request("{\"body\":\"x\"}"), "form"), { kind: "json", value: { body: "x" } })
    // A form that is not key=value pairs is text; one that is, its fields.
    assert.deepStrictEqual(parseBody(request("disk full = yes"), "form"), { kind: "text", text: "disk full = yes" })
    assert.deepStrictEqual(parseBody(request("a=1&b=x+y&a=2"), "form"), { kind: "form", fields: { a: "1", b: "x y" } })
  })

  it("the severity table, state words, and a priority header that wins", () => {
    assert.deepStrictEqual(["CRITICAL", "warning", "info", "p3", "5", "1", "bogus", undefined].map(priorityOf), ["critical", "high", "low", "normal", "critical", "low", undefined, undefined])
    assert.deepStrictEqual(["alerting", "OK", "down", "up", "pending"].map(stateOf), ["firing", "resolved", "firing", "resolved", null])
    const mapped = mapDelivery(request("{\"body\":\"x\",\"priority\":\"low\"}", { "content-type": "application/json", "x-priority": "urgent" }), { format: null, template: null })
    assert.strictEqual(mapped instanceof Refusal ? "refused" : mapped.priority, "critical")
  })

  it("the payload bound: kept whole when it fits, pruned when not, never over the bound", () => {
    const small = { a: 1, nested: { snake_case: "kept" } }
    assert.strictEqual(boundPayload(small), JSON.stringify(small))
    const big = { keep: "me", items: Array.from({ length: 500 }, (_, i) => ({ i, text: "x".repeat(500) })) }
    const pruned = JSON.parse(boundPayload(big)!) as { keep: string; items: Array<unknown> }
    assert.strictEqual(pruned.keep, "me")
    assert.isAtMost(pruned.items.length, 20)
    assert.isAtMost(Buffer.byteLength(boundPayload(big)!), INBOUND_MAX_PAYLOAD_BYTES)
    assert.isNull(boundPayload(null))
  })
})
