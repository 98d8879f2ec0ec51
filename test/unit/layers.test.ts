/**
 * The layers, read from the imports (static and dynamic, types included):
 * bin → cli → local → functions → aws / ui → runtime → infra → core → http.
 * A module may import its own layer and the layers after it, never one
 * before; and no chain of imports comes back to where it started.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { projectRoot } from '../../lib/local/handlers'

const ORDER = [['bin'], ['cli'], ['local'], ['functions'], ['aws', 'ui'], ['runtime'], ['infra'], ['core'], ['http']]
const RANK = new Map(ORDER.flatMap((layers, i) => layers.map((l) => [l, i] as const)))

type Graph = ReadonlyMap<string, readonly string[]>

/** `lib/core/x.ts` → `core`, `functions/a/handler.ts` → `functions`, `bin/app.ts` → `bin`. */
export function layerOf(file: string): string {
  const parts = file.split('/')
  return parts[0] === 'lib' ? parts[1]! : parts[0]!
}

/** Every import that runs up the layers (or into a layer of the same rank). */
export function upwardImports(g: Graph): string[] {
  const out: string[] = []
  for (const [from, targets] of g) {
    const a = layerOf(from)
    for (const to of targets) {
      const b = layerOf(to)
      if (a === b) continue
      const ra = RANK.get(a)
      const rb = RANK.get(b)
      if (ra === undefined || rb === undefined || rb <= ra) out.push(`${from} → ${to}`)
    }
  }
  return out
}

/** The import circles: strongly connected sets of more than one module (Tarjan's algorithm, iterative). */
export function circles(g: Graph): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const onStack = new Set<string>()
  const stack: string[] = []
  const found: string[][] = []
  let next = 0
  for (const root of g.keys()) {
    if (index.has(root)) continue
    const work: { v: string; i: number }[] = [{ v: root, i: 0 }]
    index.set(root, next); low.set(root, next++); stack.push(root); onStack.add(root)
    while (work.length > 0) {
      const top = work[work.length - 1]!
      const targets = g.get(top.v) ?? []
      if (top.i < targets.length) {
        const w = targets[top.i++]!
        if (!index.has(w)) {
          index.set(w, next); low.set(w, next++); stack.push(w); onStack.add(w)
          work.push({ v: w, i: 0 })
        } else if (onStack.has(w)) low.set(top.v, Math.min(low.get(top.v)!, index.get(w)!))
        continue
      }
      work.pop()
      if (work.length > 0) { const parent = work[work.length - 1]!.v; low.set(parent, Math.min(low.get(parent)!, low.get(top.v)!)) }
      if (low.get(top.v) === index.get(top.v)) {
        const c: string[] = []
        let w: string
        do { w = stack.pop()!; onStack.delete(w); c.push(w) } while (w !== top.v)
        if (c.length > 1) found.push(c.sort())
      }
    }
  }
  return found
}

/** The project's own modules and what each imports (relative specifiers, resolved to files). */
function projectGraph(): Graph {
  const files: string[] = []
  const walk = (d: string) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n)
      if (statSync(p).isDirectory()) walk(p)
      else if (/\.(ts|mts|mjs)$/.test(n) && !n.endsWith('.d.ts')) files.push(p)
    }
  }
  for (const d of ['bin', 'functions', 'lib']) walk(join(projectRoot, d))
  const g = new Map<string, string[]>()
  for (const f of files) {
    const info = ts.preProcessFile(readFileSync(f, 'utf8'), true, true)
    const targets: string[] = []
    for (const { fileName: spec } of info.importedFiles) {
      if (!spec.startsWith('.')) continue
      const base = resolve(dirname(f), spec)
      const hit = [base, `${base}.ts`, `${base}.mjs`, join(base, 'index.ts'), base.replace(/\.js$/, '.ts')].find((c) => existsSync(c) && statSync(c).isFile())
      if (hit !== undefined) targets.push(relative(projectRoot, hit))
    }
    g.set(relative(projectRoot, f), targets)
  }
  return g
}

describe('layers', () => {
  const graph = projectGraph()

  it('reads the imports of the whole project', () => {
    expect(graph.size).toBeGreaterThan(200)
    expect(graph.get('functions/metrics/handler.ts')).toContain('lib/aws/lambda.ts')
  })

  it('no import runs up a layer', () => {
    expect(upwardImports(graph)).toEqual([])
  })

  it('no import closes a circle', () => {
    expect(circles(graph)).toEqual([])
  })

  it('the checks find what they look for', () => {
    const bad = new Map([
      ['lib/core/a.ts', ['lib/infra/b.ts', 'lib/core/c.ts']],
      ['lib/core/c.ts', ['lib/core/d.ts']],
      ['lib/core/d.ts', ['lib/core/a.ts']],
      ['lib/aws/e.ts', ['lib/ui/f.ts', 'lib/runtime/g.ts']],
      ['lib/infra/b.ts', []],
    ])
    expect(upwardImports(bad)).toEqual(['lib/core/a.ts → lib/infra/b.ts', 'lib/aws/e.ts → lib/ui/f.ts'])
    expect(circles(bad)).toEqual([['lib/core/a.ts', 'lib/core/c.ts', 'lib/core/d.ts']])
  })
})
