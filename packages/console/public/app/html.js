/**
 * Preact and htm, from the console's installed packages (served by the
 * server under /console/vendor with their version in the path, so cached
 * for good). htm's tagged templates stand in for JSX: no build step.
 */
import { h, render } from "/console/vendor/preact-10.29.0.js"
import htm from "/console/vendor/htm-3.1.1.js"

export { render }
export { useCallback, useEffect, useMemo, useRef, useState } from "/console/vendor/preact-hooks-10.29.0.js"

/** `html\`<p>${text}</p>\`` — text is always escaped; markup only comes from these templates. */
export const html = htm.bind(h)
