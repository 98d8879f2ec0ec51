/** Exact decimal view of a finite number: value = mant × 10^exp, from its shortest round-trip representation. */
export function toDecimal(x: number): { mant: bigint; exp: number } {
  const s = String(x)
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/i.exec(s)
  if (!m) throw new Error(`not a finite number: ${s}`)
  const frac = m[3] ?? ''
  const exp = Number(m[4] ?? 0) - frac.length
  const mant = BigInt(m[1] + m[2] + frac)
  return { mant, exp }
}

/** Is x an exact decimal multiple of m (m > 0)? */
export function isDecimalMultiple(x: number, m: number): boolean {
  if (m <= 0) return false
  if (x === 0) return true
  const a = toDecimal(x)
  const b = toDecimal(m)
  const e = Math.min(a.exp, b.exp)
  const am = a.mant * 10n ** BigInt(a.exp - e)
  const bm = b.mant * 10n ** BigInt(b.exp - e)
  return am % bm === 0n
}

/** ajv's `multipleOf` with `multipleOfPrecision: 9`. */
export function ajvMultiple(x: number, m: number): boolean {
  if (m === 0) return false
  const r = x / m
  return !(Math.abs(Math.round(r) - r) > 1e-9)
}

/** Three-valued multipleOf: `undefined` when exact decimal arithmetic and ajv disagree. */
export function multipleOf(x: number, m: number): boolean | undefined {
  const exact = isDecimalMultiple(x, m)
  return exact === ajvMultiple(x, m) ? exact : undefined
}

export function isIntegral(m: number): boolean {
  return Number.isInteger(m)
}
