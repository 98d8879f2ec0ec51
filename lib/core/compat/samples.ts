/** Sample strings valid under the ajv-formats ("full") definition of each format, for a wanted length. */
const FIXED: Record<string, string[]> = {
  date: ['2020-01-01'],
  time: ['00:00:00Z'],
  'date-time': ['2020-01-01T00:00:00Z'],
  'iso-time': ['00:00:00'],
  'iso-date-time': ['2020-01-01T00:00:00'],
  duration: ['P1D'],
  uri: ['http://example.com/', 'urn:a'],
  'uri-reference': ['a', ''],
  'uri-template': ['a'],
  url: ['http://example.com/'],
  email: ['a@example.com'],
  hostname: ['example.com', 'a'],
  ipv4: ['127.0.0.1', '1.1.1.1'],
  ipv6: ['::1', '::'],
  regex: ['a', ''],
  uuid: ['123e4567-e89b-12d3-a456-426614174000', 'urn:uuid:123e4567-e89b-12d3-a456-426614174000'],
  'json-pointer': ['', '/a'],
  'json-pointer-uri-fragment': ['#', '#/a'],
  'relative-json-pointer': ['0', '1'],
  byte: ['', 'YWJj'],
  password: ['', 'a'],
  binary: ['', 'a'],
}

function sized(format: string, len: number): string | undefined {
  if (len < 0 || len > 100_000) return undefined
  switch (format) {
    case 'email':
      return len >= 13 ? 'a'.repeat(len - 12) + '@example.com' : undefined
    case 'uri':
    case 'url':
      return len >= 19 ? 'http://example.com/' + 'a'.repeat(len - 19) : undefined
    case 'uri-reference':
    case 'uri-template':
    case 'regex':
    case 'password':
    case 'binary':
      return 'a'.repeat(len)
    case 'hostname':
      return len >= 1 && len <= 63 ? 'a'.repeat(len) : undefined
    case 'date-time':
      return len >= 22 ? '2020-01-01T00:00:00.' + '0'.repeat(len - 21) + 'Z' : undefined
    case 'json-pointer':
      return len >= 1 ? '/' + 'a'.repeat(len - 1) : ''
    case 'byte':
      return len % 4 === 0 ? 'YWJj'.repeat(len / 4) : undefined
    default:
      return undefined
  }
}

/** Candidate strings for `format`, preferring the given lengths. Empty for unknown formats. */
export function formatSamples(format: string, lengths: number[]): string[] {
  const out: string[] = []
  for (const l of lengths) {
    const s = sized(format, l)
    if (s !== undefined) out.push(s)
  }
  out.push(...(FIXED[format] ?? []))
  return out
}

/** Escapes a literal string for use inside a unicode-mode regular expression. */
export function escapeRegex(s: string): string {
  return s.replace(/[\^$\\.*+?()[\]{}|/]/g, '\\$&')
}
