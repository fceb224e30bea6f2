/**
 * A mini-app's install page (its `installUrl`): the package, who published
 * it, its files, and whether its signature verifies against Herald's
 * signing keys.
 */
import * as api from "../api.js"
import { html } from "../html.js"
import { ErrorNote, ExternalLink, Loading, missing, PageHead, Time, useLoad } from "../ui.js"

const kib = (/** @type {number} */ bytes) => `${(bytes / 1024).toFixed(bytes < 10_240 ? 1 : 0)} KiB`

export default function MiniApp(/** @type {{ params: { packageId: string } }} */ { params }) {
  const loaded = useLoad(() => api.miniApp({ params: { packageId: params.packageId } }), [params.packageId])
  const data = loaded.data
  if (data === undefined) {
    return html`<${PageHead} title="Mini-app" />${loaded.loading ? html`<${Loading} />` : html`<${ErrorNote} error=${missing(loaded.error, "mini-app package")} />`}`
  }
  const pkg = data.package
  const manifest = pkg.manifest
  const check = data.signature
  const publisher = manifest.publisher
  return html`<${PageHead} title=${`${manifest.name} ${manifest.version}`} />
    <p class=${check.verified ? "note ok" : "note error"} role="status">${check.verified
      ? `The signature verifies (${check.algorithm}, key ${check.keyId}${check.keyRetired ? ", now retired" : ""}): this is the package as it was published, unchanged.`
      : "The signature does not verify under any of Herald's keys. Do not install this package."}</p>
    ${!data.installable && check.verified && html`<p class="note warn" role="status">This package cannot be installed: it is ${pkg.reviewState}.</p>`}
    <dl class="facts">
      <dt>Publisher</dt><dd>${publisher.name} <code class="muted">${publisher.id}</code></dd>
      <dt>App id</dt><dd><code>${manifest.appId}</code></dd>
      <dt>Format</dt><dd>${manifest.format} · ${manifest.runtime} · rated ${manifest.ageRating}+</dd>
      <dt>Package</dt><dd><code>${pkg.packageId}</code>, ${kib(pkg.archiveBytes)}, published <${Time} at=${pkg.createdAt} /></dd>
      <dt>Review</dt><dd>${pkg.reviewState}</dd>
      ${manifest.capabilities.length > 0 && html`<dt>Asks for</dt><dd>${manifest.capabilities.join(", ")}</dd>`}
      <dt>Archive SHA-256</dt><dd><code class="break">${pkg.archiveSha256}</code></dd>
      <dt>Signature</dt><dd><code class="break">${pkg.signature}</code></dd>
      ${check.publicKey && html`<dt>Signing key</dt><dd><code class="break">${check.publicKey}</code></dd>`}
      ${manifest.privacyUrl && html`<dt>Privacy</dt><dd><${ExternalLink} href=${manifest.privacyUrl} /></dd>`}
      ${manifest.supportUrl && html`<dt>Support</dt><dd><${ExternalLink} href=${manifest.supportUrl} /></dd>`}
    </dl>
    <h2>Files</h2>
    <ul class="plain">${manifest.files.map((/** @type {any} */ f) => html`<li><code>${f.path}</code> <span class="muted">${f.mediaType}, ${kib(f.size)}</span></li>`)}</ul>
    ${data.installable && pkg.universalUrl && html`<p><${ExternalLink} href=${pkg.universalUrl}>Install in the Herald app</${ExternalLink}></p>`}`
}
