/**
 * Passkeys: the JSON forms of WebAuthn options and credentials (as
 * @simplewebauthn/server sends and reads them) to and from what
 * `navigator.credentials` takes and gives. Browsers that have
 * `PublicKeyCredential.parse…FromJSON` and `toJSON` use them; older ones get
 * the same conversion done here.
 */

const encode = (/** @type {ArrayBuffer | ArrayBufferView} */ data) => {
  const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
  let text = ""
  for (const byte of bytes) text += String.fromCharCode(byte)
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")
}

export const decode = (/** @type {string} */ text) => {
  const base64 = text.replace(/-/g, "+").replace(/_/g, "/")
  const binary = atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4))
  return Uint8Array.from(binary, (c) => c.charCodeAt(0))
}

const withIds = (/** @type {any[] | undefined} */ list) => list?.map((c) => ({ ...c, id: decode(c.id) }))

/** Whether this browser can use passkeys at all. */
export const passkeysSupported = () => typeof PublicKeyCredential === "function" && typeof navigator.credentials?.get === "function"

const PKC = /** @type {any} */ (globalThis.PublicKeyCredential)

/** @param {any} json PublicKeyCredentialRequestOptionsJSON */
const requestOptions = (json) =>
  typeof PKC?.parseRequestOptionsFromJSON === "function"
    ? PKC.parseRequestOptionsFromJSON(json)
    : { ...json, challenge: decode(json.challenge), allowCredentials: withIds(json.allowCredentials) }

/** @param {any} json PublicKeyCredentialCreationOptionsJSON */
const creationOptions = (json) =>
  typeof PKC?.parseCreationOptionsFromJSON === "function"
    ? PKC.parseCreationOptionsFromJSON(json)
    : {
      ...json,
      challenge: decode(json.challenge),
      user: { ...json.user, id: decode(json.user.id) },
      excludeCredentials: withIds(json.excludeCredentials)
    }

/** A credential as JSON (RegistrationResponseJSON or AuthenticationResponseJSON). */
const credentialJson = (/** @type {any} */ credential) => {
  if (typeof credential.toJSON === "function") {
    try {
      return credential.toJSON()
    } catch {
      // Some browsers ship a toJSON that throws for some authenticators: converted below instead.
    }
  }
  const r = credential.response
  /** @type {Record<string, unknown>} */
  const response = { clientDataJSON: encode(r.clientDataJSON) }
  if (r.attestationObject) {
    response.attestationObject = encode(r.attestationObject)
    response.transports = typeof r.getTransports === "function" ? r.getTransports() : []
    if (typeof r.getPublicKey === "function" && r.getPublicKey()) response.publicKey = encode(r.getPublicKey())
    if (typeof r.getPublicKeyAlgorithm === "function") response.publicKeyAlgorithm = r.getPublicKeyAlgorithm()
    if (typeof r.getAuthenticatorData === "function") response.authenticatorData = encode(r.getAuthenticatorData())
  } else {
    response.authenticatorData = encode(r.authenticatorData)
    response.signature = encode(r.signature)
    if (r.userHandle) response.userHandle = encode(r.userHandle)
  }
  return {
    id: credential.id,
    rawId: encode(credential.rawId),
    type: credential.type,
    authenticatorAttachment: credential.authenticatorAttachment ?? undefined,
    clientExtensionResults: credential.getClientExtensionResults?.() ?? {},
    response
  }
}

/** Signs in with a passkey: the browser asks the person; resolves to the assertion as JSON. */
export const getPasskey = async (/** @type {any} */ optionsJson) => {
  const credential = await navigator.credentials.get({ publicKey: requestOptions(optionsJson) })
  if (credential === null) throw new Error("No passkey was chosen.")
  return credentialJson(credential)
}

/** Makes a passkey: resolves to the new credential as JSON. */
export const createPasskey = async (/** @type {any} */ optionsJson) => {
  const credential = await navigator.credentials.create({ publicKey: creationOptions(optionsJson) })
  if (credential === null) throw new Error("No passkey was made.")
  return credentialJson(credential)
}

/** What the browser said, in words (a person cancelling is not an error worth a stack of detail). */
export const passkeyMessage = (/** @type {any} */ error) =>
  error?.name === "NotAllowedError"
    ? "The passkey request was cancelled or timed out."
    : error?.name === "InvalidStateError"
    ? "This device already holds a passkey for your account."
    : error?.message ?? String(error)
