/**
 * `OneTimeSecret` (Operation.ts): an endpoint whose success answer carries a
 * secret shown once is annotated, so the server sends every answer of it with
 * `Cache-Control: no-store`. The rule is checked from the schemas, not from a
 * list: any endpoint of any of the four APIs whose success schema holds a
 * string field named like a secret must carry the annotation, so a new such
 * endpoint cannot forget it. The OpenAPI description says so too.
 */
import { assert, describe, it } from "@effect/vitest"
import { AgentApi, AppApi, HooksApi, OAuthApi, OneTimeSecret, oneTimeSecretNote } from "@herald/api"
import { Context, Schema, SchemaAST } from "effect"
import { HttpApi, OpenApi } from "effect/http-api"

const apis = [AgentApi, AppApi, HooksApi, OAuthApi] as const

/**
 * Field names that hold a credential when they are strings: a token's or a
 * client's `secret`/`client_secret`, a webhook's `signingSecret`, a
 * connector's `callbackSecret`, an inbound service's `webhookUrl` (its token is
 * in it), an invite's `code`, a gateway `pass` and the `session` it opens, a
 * sign-in `link`, OAuth's `access_token`/`refresh_token`, any `token`.
 */
const secretName = /secret|^(code|pass|passcode|password|session|link|signInLink|token|webhookUrl)$|^(access|refresh|id)_token$/i

interface Field {
  readonly path: string
  readonly isString: boolean
}

const isStringy = (ast: SchemaAST.AST): boolean => {
  const encoded = SchemaAST.toEncoded(ast)
  return SchemaAST.isString(encoded) || SchemaAST.isTemplateLiteral(encoded) ||
    (SchemaAST.isUnion(encoded) && encoded.types.some(isStringy))
}

/** Every property of a schema, nested ones included (as its encoded JSON shows them). */
const fieldsOf = (ast: SchemaAST.AST, prefix = "", seen = new Set<SchemaAST.AST>()): Array<Field> => {
  if (seen.has(ast)) return []
  seen.add(ast)
  const encoded = SchemaAST.toEncoded(ast)
  if (SchemaAST.isObjects(encoded)) {
    return encoded.propertySignatures.flatMap((p) => {
      const path = `${prefix}${String(p.name)}`
      return [{ path, isString: isStringy(p.type) }, ...fieldsOf(p.type, `${path}.`, seen)]
    })
  }
  if (SchemaAST.isUnion(encoded)) return encoded.types.flatMap((t) => fieldsOf(t, prefix, seen))
  if (SchemaAST.isArrays(encoded)) return [...encoded.elements, ...encoded.rest].flatMap((t) => fieldsOf(t, `${prefix}[].`, seen))
  if (SchemaAST.isSuspend(encoded)) return fieldsOf(encoded.thunk(), prefix, seen)
  if (SchemaAST.isDeclaration(encoded)) return encoded.typeParameters.flatMap((t) => fieldsOf(t, prefix, seen))
  return []
}

interface Endpoint {
  readonly route: string
  readonly oneTimeSecret: boolean
  /** The success fields named like a secret. */
  readonly secretFields: ReadonlyArray<string>
}

const endpoints: ReadonlyArray<Endpoint> = apis.flatMap((api) => {
  const out: Array<Endpoint> = []
  HttpApi.reflect(api as unknown as HttpApi.Top, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, mergedAnnotations, successes }) => {
      const fields = [...successes.values()].flat().flatMap((schema) => fieldsOf(schema.ast))
      out.push({
        route: `${endpoint.method} ${endpoint.path}`,
        oneTimeSecret: Context.getOrUndefined(mergedAnnotations, OneTimeSecret) === true,
        secretFields: [...new Set(fields.filter((f) => f.isString && secretName.test(f.path.split(".").pop()!)).map((f) => f.path))]
      })
    }
  })
  return out
})

describe("OneTimeSecret", () => {
  it("the walker sees nested, optional and array fields (it would catch a secret anywhere in an answer)", () => {
    const probe = Schema.Struct({
      outer: Schema.Struct({ webhookUrl: Schema.optionalKey(Schema.NullOr(Schema.String)) }),
      items: Schema.Array(Schema.Struct({ pass: Schema.String })),
      token: Schema.Struct({ id: Schema.String }),
      readThroughToken: Schema.String,
      client_secret_expires_at: Schema.Number
    })
    const fields = fieldsOf(probe.ast).filter((f) => f.isString && secretName.test(f.path.split(".").pop()!)).map((f) => f.path)
    // `token` is an object here (a record, not its secret); the cursor and the number are not secrets.
    assert.deepStrictEqual(fields.sort(), ["items.[].pass", "outer.webhookUrl"])
  })

  it("every endpoint whose success answer has a field named like a secret is annotated", () => {
    const missing = endpoints.filter((e) => e.secretFields.length > 0 && !e.oneTimeSecret)
    assert.deepStrictEqual(
      missing.map((e) => `${e.route} (${e.secretFields.join(", ")})`),
      [],
      "annotate these endpoints with `secret: true` (agentOperation/personOperation) or `oneTimeSecret`"
    )
  })

  it("the annotated endpoints are exactly the ones that hand out a secret (or take one: OAuth's token, revocation and sign-in)", () => {
    assert.deepStrictEqual(endpoints.filter((e) => e.oneTimeSecret).map((e) => e.route).sort(), [
      "GET /api/app/auth/link",
      "GET /oauth/sign-in",
      "POST /api/agent/connectors",
      "POST /api/agent/connectors/:id/access",
      "POST /api/agent/connectors/:id/rotate-secret",
      "POST /api/agent/services",
      "POST /api/agent/services/:id/rotate",
      "POST /api/agent/teams/:id/invites",
      "POST /api/agent/webhooks",
      "POST /api/agent/webhooks/:id/rotate-secret",
      "POST /api/app/auth/passkey",
      "POST /api/app/connectors/:id/passes",
      "POST /api/app/teams/:id/invites",
      "POST /api/app/tokens",
      "POST /oauth/register",
      "POST /oauth/revoke",
      "POST /oauth/token"
    ])
    // Each answer that hands one out names it in a field the walker recognises.
    const handsOut = endpoints.filter((e) => e.secretFields.length > 0).map((e) => e.route)
    assert.includeMembers(handsOut, ["POST /api/app/tokens", "POST /api/agent/services", "POST /oauth/register", "POST /oauth/token"])
  })

  it("the OpenAPI description of every annotated operation says its answers are no-store", () => {
    for (const api of apis) {
      const doc = OpenApi.fromApi(api as unknown as HttpApi.Top) as unknown as {
        paths: Record<string, Record<string, { description?: string }>>
      }
      for (const e of endpoints.filter((e) => e.oneTimeSecret)) {
        const [method, path] = e.route.split(" ") as [string, string]
        const operation = doc.paths[path.replace(/:(\w+)/g, "{$1}")]?.[method.toLowerCase()]
        if (operation === undefined) continue
        assert.include(operation.description ?? "", oneTimeSecretNote, e.route)
      }
    }
    const doc = OpenApi.fromApi(AppApi) as unknown as { paths: Record<string, Record<string, { description: string }>> }
    assert.include(doc.paths["/api/app/tokens"]!.post!.description, "Cache-Control: no-store")
    assert.notInclude(doc.paths["/api/app/tokens"]!.get!.description, "Cache-Control")
  })
})
