/** A strict reader of Prometheus' text format 0.0.4 for tests: every line checked as a scraper would. */
import { expect } from 'vitest'

export interface ParsedSample {
  readonly name: string
  readonly labels: Record<string, string>
  readonly value: number
}
export interface Parsed {
  readonly help: Map<string, string>
  readonly types: Map<string, string>
  readonly samples: ParsedSample[]
  /** Family names in the order of their TYPE lines. */
  readonly order: string[]
}

export function parseExposition(text: string): Parsed {
  expect(text.endsWith('\n')).toBe(true)
  const help = new Map<string, string>()
  const types = new Map<string, string>()
  const samples: ParsedSample[] = []
  const order: string[] = []
  let family: string | undefined
  for (const line of text.slice(0, -1).split('\n')) {
    const comment = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line)
    if (comment) {
      const [, kind, name, rest] = comment
      if (kind === 'HELP') {
        expect(help.has(name!), `HELP ${name} once`).toBe(false)
        help.set(name!, rest!.replace(/\\(\\|n)/g, (_, c: string) => (c === 'n' ? '\n' : '\\')))
      } else {
        expect(types.has(name!), `TYPE ${name} once`).toBe(false)
        expect(['counter', 'gauge', 'summary', 'histogram', 'untyped']).toContain(rest)
        types.set(name!, rest!)
        order.push(name!)
        family = name
      }
      continue
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$/.exec(line)
    expect(m, `sample line: ${line}`).not.toBeNull()
    const [, name, labelText, value] = m!
    // every sample belongs to the family of the last TYPE line (summaries own _sum and _count)
    expect(family).toBeDefined()
    expect([family, `${family}_sum`, `${family}_count`]).toContain(name)
    const labels: Record<string, string> = {}
    if (labelText) {
      let i = 1
      const s = labelText
      while (s[i] !== '}') {
        const ln = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(s.slice(i))![0]
        i += ln.length
        expect(s.slice(i, i + 2)).toBe('="')
        i += 2
        let v = ''
        while (s[i] !== '"') {
          if (s[i] === '\\') {
            const c = s[i + 1]
            expect(['\\', '"', 'n']).toContain(c)
            v += c === 'n' ? '\n' : c
            i += 2
          } else v += s[i++]
        }
        i++
        labels[ln] = v
        if (s[i] === ',') i++
      }
      expect(i).toBe(s.length - 1)
    }
    const num = value === '+Inf' ? Infinity : value === '-Inf' ? -Infinity : Number(value)
    if (value !== 'NaN') expect(Number.isNaN(num), `value ${value}`).toBe(false)
    samples.push({ name: name!, labels, value: num })
  }
  return { help, types, samples, order }
}
