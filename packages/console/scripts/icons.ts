/**
 * Draws the console's icons (a white bell on indigo) into public/icons: the
 * PNGs a web app manifest and notifications need (192, 512, a maskable 512
 * whose bell stays inside the safe circle, a 96 px monochrome badge) and the
 * SVG favicon. Plain node:zlib PNG encoding, so no image tool is needed;
 * run it again after changing the drawing: `node packages/console/scripts/icons.ts`.
 */
import { writeFileSync } from "node:fs"
import { crc32, deflateSync } from "node:zlib"

const out = new URL("../public/icons/", import.meta.url)
const INDIGO = [0x37, 0x30, 0xa3] as const

/** Whether a point (unit square, y down) is inside the bell. */
const inBell = (x: number, y: number): boolean => {
  const dx = x - 0.5
  const circle = (cx: number, cy: number, r: number) => (x - cx) ** 2 + (y - cy) ** 2 <= r * r
  if (circle(0.5, 0.205, 0.04)) return true // the knob
  if (circle(0.5, 0.37, 0.16)) return true // the dome
  if (y >= 0.37 && y <= 0.66 && Math.abs(dx) <= 0.16 + (y - 0.37) * 0.42) return true // the body, widening
  if (y >= 0.64 && y <= 0.71 && Math.abs(dx) <= 0.3) return true // the lip
  if (y > 0.64 && y <= 0.71 && (circle(0.2, 0.675, 0.035) || circle(0.8, 0.675, 0.035))) return true // its round ends
  return circle(0.5, 0.765, 0.065) // the clapper
}

/** Whether a point is inside a rounded square of corner radius `r`. */
const inRounded = (x: number, y: number, r: number): boolean => {
  const cx = Math.min(Math.max(x, r), 1 - r)
  const cy = Math.min(Math.max(y, r), 1 - r)
  return (x - cx) ** 2 + (y - cy) ** 2 <= r * r
}

interface Style {
  /** Corner radius of the background (0: full bleed); undefined: no background (a badge). */
  readonly corner: number | undefined
  /** The bell's scale about the centre. */
  readonly scale: number
}

/** RGBA pixels, 4×4 samples a pixel. */
const draw = (size: number, style: Style): Buffer => {
  const pixels = Buffer.alloc(size * size * 4)
  const n = 4
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      let bell = 0
      let background = 0
      for (let sy = 0; sy < n; sy++) {
        for (let sx = 0; sx < n; sx++) {
          const x = (px + (sx + 0.5) / n) / size
          const y = (py + (sy + 0.5) / n) / size
          if (style.corner === undefined || inRounded(x, y, style.corner)) background++
          if (inBell(0.5 + (x - 0.5) / style.scale, 0.5 + (y - 0.5) / style.scale)) bell++
        }
      }
      const b = bell / (n * n)
      const g = background / (n * n)
      const at = (py * size + px) * 4
      if (style.corner === undefined) {
        pixels.set([255, 255, 255, Math.round(255 * b)], at)
      } else {
        // White over indigo, both clipped to the background's shape.
        const mix = (c: number) => Math.round(c * (1 - b) + 255 * b)
        pixels.set([mix(INDIGO[0]), mix(INDIGO[1]), mix(INDIGO[2]), Math.round(255 * g)], at)
      }
    }
  }
  return pixels
}

const chunk = (type: string, data: Buffer) => {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, "ascii"), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(body))
  return Buffer.concat([length, body, crc])
}

const png = (size: number, rgba: Buffer) => {
  const header = Buffer.alloc(13)
  header.writeUInt32BE(size, 0)
  header.writeUInt32BE(size, 4)
  header.set([8, 6, 0, 0, 0], 8) // 8-bit RGBA, no interlace
  const rows = Buffer.alloc(size * (size * 4 + 1))
  for (let y = 0; y < size; y++) rgba.copy(rows, y * (size * 4 + 1) + 1, y * size * 4, (y + 1) * size * 4)
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(rows, { level: 9 })),
    chunk("IEND", Buffer.alloc(0))
  ])
}

const write = (name: string, size: number, style: Style) => writeFileSync(new URL(name, out), png(size, draw(size, style)))

write("icon-192.png", 192, { corner: 0.22, scale: 1 })
write("icon-512.png", 512, { corner: 0.22, scale: 1 })
// Maskable: full bleed; the bell fits the safe zone (a circle of 40% radius).
write("icon-maskable-512.png", 512, { corner: 0, scale: 0.78 })
write("badge-96.png", 96, { corner: undefined, scale: 1.15 })

writeFileSync(new URL("icon.svg", out), `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">
<rect width="100" height="100" rx="22" fill="#3730a3"/>
<g fill="#fff">
<circle cx="50" cy="20.5" r="4"/>
<path d="M34 37a16 16 0 0 1 32 0v0l12.2 29H21.8L34 37z"/>
<rect x="20" y="64" width="60" height="7" rx="3.5"/>
<circle cx="50" cy="76.5" r="6.5"/>
</g>
</svg>
`)
