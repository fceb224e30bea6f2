/**
 * Every declared error's status, route by route, from the contract: each error
 * class an endpoint declares carries its HTTP status as an annotation, the
 * OpenAPI document lists the class under that same status for that
 * operation, and no two errors an operation declares under one status share a
 * `code` (a client tells them apart by `code`). The error schemas describe the
 * bodies as sent: no `_tag`.
 */
import { assert, describe, it } from "@effect/vitest"
import { AgentApi, AppApi, HooksApi } from "@herald/api"
import { HttpApi, OpenApi } from "effect/http-api"

interface Declared {
  readonly method: string
  readonly path: string
  readonly status: number
  readonly identifier: string
  readonly annotated: number | undefined
}

const declaredErrors = (api: typeof AgentApi | typeof AppApi | typeof HooksApi) => {
  const out: Array<Declared> = []
  HttpApi.reflect(api as never, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, errors }) => {
      for (const [status, schemas] of errors) {
        for (const schema of schemas) {
          const annotations = schema.ast.annotations as { identifier?: string; httpApiStatus?: number } | undefined
          out.push({
            method: endpoint.method.toLowerCase(),
            path: endpoint.path.replace(/:(\w+)/g, "{$1}"),
            status,
            identifier: annotations?.identifier ?? "?",
            annotated: annotations?.httpApiStatus
          })
        }
      }
    }
  })
  return out
}

type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: JsonSchema }> }> }>>
  components: { schemas: Record<string, JsonSchema> }
}
type JsonSchema = { $ref?: string; anyOf?: Array<JsonSchema>; properties?: Record<string, { enum?: Array<string> }> }

/** The component names a response lists (one `$ref` or an `anyOf` of them). */
const refsOf = (schema: JsonSchema | undefined): Array<string> =>
  schema === undefined ? [] : schema.$ref !== undefined
    ? [schema.$ref.replace("#/components/schemas/", "")]
    : (schema.anyOf ?? []).flatMap(refsOf)

for (const [name, api] of [["AgentApi", AgentApi], ["AppApi", AppApi], ["HooksApi", HooksApi]] as const) {
  describe(`${name} declared errors`, () => {
    const doc = OpenApi.fromApi(api as never) as unknown as Doc
    const declared = declaredErrors(api)

    it("every declared error's annotated status is the status its operation lists it under", () => {
      assert.isAbove(declared.length, 0)
      for (const d of declared) {
        const where = `${d.method.toUpperCase()} ${d.path} ${d.identifier}`
        assert.strictEqual(d.annotated, d.status, where)
        const response = doc.paths[d.path]?.[d.method]?.responses[String(d.status)]
        assert.isDefined(response, `${where}: no ${d.status} response in the OpenAPI document`)
        assert.include(refsOf(response!.content?.["application/json"]?.schema), `${d.identifier}Encoded`, where)
      }
    })

    it("no operation declares two errors with one status and one code", () => {
      const codes = new Map<string, Array<string>>()
      for (const d of declared) {
        const code = doc.components.schemas[`${d.identifier}Encoded`]?.properties?.code?.enum ?? []
        assert.lengthOf(code, 1, `${d.identifier} has one literal code`)
        const key = `${d.method} ${d.path} ${d.status}`
        codes.set(key, [...(codes.get(key) ?? []), code[0]!])
      }
      for (const [key, list] of codes) assert.strictEqual(new Set(list).size, list.length, `${key}: ${list.join(", ")}`)
    })

    it("no error schema lists `_tag`, which no body carries", () => {
      for (const d of declared) {
        const schema = doc.components.schemas[`${d.identifier}Encoded`]!
        assert.notProperty(schema.properties ?? {}, "_tag", d.identifier)
      }
    })
  })
}
