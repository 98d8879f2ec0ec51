/**
 * Benchmark and soundness gate of the schema compatibility checker on Iglu Central.
 *
 *   npm run bench:compat [-- --json] [-- --limit N]
 *
 * Corpus: the repository's Iglu Central snapshot, `schemas/iglu-central` (override with FLOE_IGLU_CENTRAL). Pairs: every
 * JSON schema against itself, consecutive versions in both directions, all other pairs within a family, and
 * mutation pairs with a verdict known by construction. An independent witness oracle (sampling + B-guided
 * mutations, validated with ajv-draft-04 + ajv-formats, multipleOfPrecision 9) attacks every Compatible
 * verdict. Exits 1 when a correctness target fails.
 *
 * Time is reported twice: for the first check of each pair in this fresh process (JIT compilation, first
 * use of every pattern and garbage collection included), and in steady state, the way a running registry
 * or API checks: after one untimed pass over all pairs, each pair is checked three more times on fresh
 * copies of both schemas (nothing cached per schema object carries over) and its median is kept.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, resolve as resolvePath } from 'node:path'
import { fileURLToPath } from 'node:url'
import { checkCompatibility } from '../../lib/core/compat/index'
import type { CompatResult } from '../../lib/core/compat/index'
import { mutate } from './compat/mutate'
import { findWitness, OracleValidator } from './compat/oracle'

type Kind = 'identity' | 'consecutive' | 'family' | 'widen' | 'narrow'
interface Pair {
  kind: Kind
  label: string
  a: object
  b: object
  expect?: 'C' | 'I'
}

const args = process.argv.slice(2)
const asJson = args.includes('--json')
const limitArg = args.indexOf('--limit')
const limit = limitArg >= 0 ? Number(args[limitArg + 1]) : Infinity
const log = (msg: string): void => {
  process.stderr.write(msg + '\n')
}

const repoRoot = resolvePath(dirname(fileURLToPath(import.meta.url)), '..', '..')
const corpusRoot = process.env.FLOE_IGLU_CENTRAL ?? resolvePath(repoRoot, 'schemas', 'iglu-central')
const schemasDir = existsSync(join(corpusRoot, 'schemas')) ? join(corpusRoot, 'schemas') : corpusRoot
if (!existsSync(schemasDir) || !statSync(schemasDir).isDirectory()) {
  process.stderr.write(`bench:compat: Iglu Central copy not found at ${corpusRoot} (set FLOE_IGLU_CENTRAL to its directory)\n`)
  process.exit(2)
}

// ---- corpus ----
interface Entry {
  vendor: string
  name: string
  version: [number, number, number]
  uri: string
  schema: object
}
const entries: Entry[] = []
for (const vendor of readdirSync(schemasDir).sort()) {
  const vdir = join(schemasDir, vendor)
  if (!statSync(vdir).isDirectory()) continue
  for (const name of readdirSync(vdir).sort()) {
    const fdir = join(vdir, name, 'jsonschema')
    if (!existsSync(fdir)) continue
    for (const ver of readdirSync(fdir)) {
      const m = /^(\d+)-(\d+)-(\d+)$/.exec(ver)
      if (!m) continue
      try {
        const schema = JSON.parse(readFileSync(join(fdir, ver), 'utf8')) as unknown
        if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) continue
        entries.push({ vendor, name, version: [Number(m[1]), Number(m[2]), Number(m[3])], uri: `iglu:${vendor}/${name}/jsonschema/${ver}`, schema })
      } catch {
        log(`skipping unparsable ${vendor}/${name}/${ver}`)
      }
    }
  }
}
const byUri = new Map(entries.map((e) => [e.uri, e.schema]))
const resolve = (uri: string): object | undefined => byUri.get(uri)
const families = new Map<string, Entry[]>()
for (const e of entries) {
  const k = `${e.vendor}/${e.name}`
  if (!families.has(k)) families.set(k, [])
  families.get(k)!.push(e)
}
for (const f of families.values()) f.sort((x, y) => x.version[0] - y.version[0] || x.version[1] - y.version[1] || x.version[2] - y.version[2])
const ver = (e: Entry): string => e.version.join('-')

const pairs: Pair[] = []
for (const e of entries) pairs.push({ kind: 'identity', label: `${e.vendor}/${e.name} ${ver(e)}`, a: e.schema, b: structuredClone(e.schema), expect: 'C' })
for (const [k, f] of families) {
  for (let i = 0; i < f.length; i++) {
    for (let j = i + 1; j < f.length; j++) {
      const kind: Kind = j === i + 1 ? 'consecutive' : 'family'
      pairs.push({ kind, label: `${k} ${ver(f[i])} -> ${ver(f[j])}`, a: f[i].schema, b: f[j].schema })
      pairs.push({ kind, label: `${k} ${ver(f[j])} -> ${ver(f[i])}`, a: f[j].schema, b: f[i].schema })
    }
  }
}
const oracle = new OracleValidator(resolve)
let seed = 0
for (const e of entries) {
  const { widen, narrow } = mutate(e.schema, 3, seed++)
  for (const w of widen) pairs.push({ kind: 'widen', label: `${e.vendor}/${e.name} ${ver(e)} ${w.op}`, a: e.schema, b: w.schema, expect: 'C' })
  for (const n of narrow) {
    // Narrowings are labelled only when the oracle confirms a witness with ajv.
    const w = findWitness(oracle, e.schema, n.schema, resolve, 1500, seed)
    if (w !== undefined) pairs.push({ kind: 'narrow', label: `${e.vendor}/${e.name} ${ver(e)} ${n.op}`, a: e.schema, b: n.schema, expect: 'I' })
  }
}
const selected = pairs.slice(0, limit)
log(`bench:compat: ${entries.length} schemas, ${families.size} families, ${selected.length} pairs`)

// ---- run ----
interface Row {
  pair: Pair
  r: CompatResult
  ms: number
}
const rows: Row[] = []
const t0 = performance.now()
for (let i = 0; i < selected.length; i++) {
  const p = selected[i]
  const t = performance.now()
  const r = checkCompatibility(p.a, p.b, { resolve })
  rows.push({ pair: p, r, ms: performance.now() - t })
  if ((i + 1) % 500 === 0) log(`  checked ${i + 1}/${selected.length} (${((performance.now() - t0) / 1000).toFixed(1)} s)`)
}

// ---- steady state ----
const STEADY_RUNS = 3
const fresh = (p: Pair): [object, object] => [structuredClone(p.a), structuredClone(p.b)]
for (const p of selected) checkCompatibility(...fresh(p), { resolve })
const steadyRuns: number[][] = selected.map(() => [])
for (let run = 0; run < STEADY_RUNS; run++) {
  for (let i = 0; i < selected.length; i++) {
    const [a, b] = fresh(selected[i])
    const t = performance.now()
    checkCompatibility(a, b, { resolve })
    steadyRuns[i].push(performance.now() - t)
  }
}
const steadyMs = steadyRuns.map((xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)])
log(`  steady state: ${STEADY_RUNS} runs per pair after a warm-up pass`)

// ---- soundness ----
const falseCompatible: { label: string; kind: Kind; witness: unknown }[] = []
const witnessBad: string[] = []
const constructedMismatch: { label: string; kind: Kind; expected: string; got: string }[] = []
let oracleRuns = 0
for (let i = 0; i < rows.length; i++) {
  const { pair, r } = rows[i]
  if (r.result === 'Compatible') {
    oracleRuns++
    const w = findWitness(oracle, pair.a, pair.b, resolve, pair.kind === 'identity' ? 100 : 600, i)
    if (w !== undefined) falseCompatible.push({ label: pair.label, kind: pair.kind, witness: w })
    if (pair.expect === 'I') constructedMismatch.push({ label: pair.label, kind: pair.kind, expected: 'I', got: 'C' })
  } else if (r.result === 'SchemaIncompatible') {
    const va = oracle.compile(pair.a)
    const vb = oracle.compile(pair.b)
    const w = JSON.parse(JSON.stringify(r.witness)) as unknown
    if (!va || !vb || va(w) !== true || vb(w) !== false) witnessBad.push(pair.label)
    if (pair.expect === 'C') constructedMismatch.push({ label: pair.label, kind: pair.kind, expected: 'C', got: 'I' })
  }
  if ((i + 1) % 1000 === 0) log(`  oracle ${i + 1}/${rows.length}`)
}

// ---- report ----
const kinds: Kind[] = ['identity', 'consecutive', 'family', 'widen', 'narrow']
const perKind = Object.fromEntries(
  kinds.map((k) => {
    const rs = rows.filter((x) => x.pair.kind === k)
    const c = rs.filter((x) => x.r.result === 'Compatible').length
    const inc = rs.filter((x) => x.r.result === 'SchemaIncompatible').length
    return [k, { pairs: rs.length, compatible: c, incompatible: inc, undecidable: rs.length - c - inc, decidedRate: rs.length ? (c + inc) / rs.length : 1 }]
  }),
)
const real = rows.filter((x) => x.pair.kind === 'identity' || x.pair.kind === 'consecutive' || x.pair.kind === 'family')
const decided = (rs: Row[]): number => rs.filter((x) => x.r.result !== 'SchemaUndecidable').length / Math.max(1, rs.length)
const hist = new Map<string, number>()
for (const { r } of rows) {
  if (r.result !== 'SchemaUndecidable') continue
  const keys = new Set(r.reasons.map((x) => x.keyword))
  for (const k of keys) hist.set(k, (hist.get(k) ?? 0) + 1)
}
const times = rows.map((x) => x.ms).sort((a, b) => a - b)
const q = (p: number): number => times[Math.min(times.length - 1, Math.floor(p * times.length))] ?? 0
const incompatible = rows.filter((x) => x.r.result === 'SchemaIncompatible').length
const quantiles = (rs: Row[]): { p50: number; p99: number; max: number } => {
  const t = rs.map((x) => x.ms).sort((a, b) => a - b)
  const at = (p: number): number => t[Math.min(t.length - 1, Math.floor(p * t.length))] ?? 0
  return { p50: at(0.5), p99: at(0.99), max: t[t.length - 1] ?? 0 }
}
const msByVerdict = Object.fromEntries(
  (['Compatible', 'SchemaIncompatible', 'SchemaUndecidable'] as const).map((v) => [v, quantiles(rows.filter((x) => x.r.result === v))]),
)
const steadyRows: Row[] = rows.map((x, i) => ({ ...x, ms: steadyMs[i] }))
const steady = {
  ...quantiles(steadyRows),
  byVerdict: Object.fromEntries((['Compatible', 'SchemaIncompatible', 'SchemaUndecidable'] as const).map((v) => [v, quantiles(steadyRows.filter((x) => x.r.result === v))])),
  igluCentralPairs: quantiles(steadyRows.filter((x) => x.pair.kind === 'identity' || x.pair.kind === 'consecutive' || x.pair.kind === 'family')),
}
const report = {
  corpus: corpusRoot,
  schemas: entries.length,
  pairs: rows.length,
  falseCompatible: falseCompatible.length,
  constructedMismatch: constructedMismatch.length,
  incompatibleOnConstructedCompatible: constructedMismatch.filter((x) => x.expected === 'C').length,
  compatibleOnConstructedIncompatible: constructedMismatch.filter((x) => x.expected === 'I').length,
  witnessRevalidated: incompatible === 0 ? 1 : (incompatible - witnessBad.length) / incompatible,
  decidedRateIgluCentral: decided(real),
  decidedRateOverall: decided(rows),
  perKind,
  undecidableReasons: Object.fromEntries([...hist].sort((a, b) => b[1] - a[1])),
  ms: { p50: q(0.5), p99: q(0.99), max: times[times.length - 1] ?? 0 },
  msByVerdict,
  steadyMs: steady,
  oracleRuns,
  details: { falseCompatible: falseCompatible.slice(0, 20), constructedMismatch: constructedMismatch.slice(0, 20), witnessBad: witnessBad.slice(0, 20) },
}
const failed = report.falseCompatible > 0 || report.constructedMismatch > 0 || report.witnessRevalidated < 1

if (asJson) process.stdout.write(JSON.stringify(report) + '\n')
else {
  const pct = (x: number): string => (100 * x).toFixed(1) + '%'
  const out = [
    `Schema compatibility bench (${report.schemas} schemas from ${corpusRoot})`,
    `pairs: ${report.pairs}`,
    `false Compatible (oracle witness against a C verdict): ${report.falseCompatible}   [target 0]`,
    `Incompatible on constructed-compatible pairs: ${report.incompatibleOnConstructedCompatible}   [target 0]`,
    `Compatible on constructed-incompatible pairs: ${report.compatibleOnConstructedIncompatible}   [target 0]`,
    `Incompatible witnesses re-validated: ${pct(report.witnessRevalidated)} of ${incompatible}   [target 100%]`,
    `decided, Iglu Central pairs: ${pct(report.decidedRateIgluCentral)}   [target >= 97%]`,
    `decided, all pairs: ${pct(report.decidedRateOverall)}`,
    ...kinds.map((k) => {
      const s = perKind[k]
      return `  ${k.padEnd(12)} ${String(s.pairs).padStart(5)} pairs  C ${String(s.compatible).padStart(5)}  I ${String(s.incompatible).padStart(5)}  U ${String(s.undecidable).padStart(4)}  decided ${pct(s.decidedRate)}`
    }),
    `undecidable reasons (pairs per keyword): ${JSON.stringify(report.undecidableReasons)}`,
    `ms per pair, steady state (median of ${STEADY_RUNS} checks on fresh copies after a warm-up pass): p50 ${steady.p50.toFixed(3)}  p99 ${steady.p99.toFixed(3)}  max ${steady.max.toFixed(3)}   [targets p50 < 1, p99 < 5]`,
    ...Object.entries(steady.byVerdict).map(([v, m]) => `  ${v.padEnd(18)} p50 ${m.p50.toFixed(3)}  p99 ${m.p99.toFixed(3)}  max ${m.max.toFixed(3)}`),
    `  ${'Iglu Central pairs'.padEnd(18)} p50 ${steady.igluCentralPairs.p50.toFixed(3)}  p99 ${steady.igluCentralPairs.p99.toFixed(3)}  max ${steady.igluCentralPairs.max.toFixed(3)}`,
    `ms per pair, first check in a fresh process: p50 ${report.ms.p50.toFixed(3)}  p99 ${report.ms.p99.toFixed(3)}  max ${report.ms.max.toFixed(3)}   [target p99 < 20]`,
    ...Object.entries(msByVerdict).map(([v, m]) => `  ${v.padEnd(18)} p50 ${m.p50.toFixed(3)}  p99 ${m.p99.toFixed(3)}  max ${m.max.toFixed(3)}`),
    `(Incompatible includes witness confirmation: the interpreter of ajv's verdicts, or ajv where it does not answer)`,
  ]
  for (const f of falseCompatible.slice(0, 10)) out.push(`FALSE COMPATIBLE ${f.kind} ${f.label}: ${JSON.stringify(f.witness).slice(0, 300)}`)
  for (const m of constructedMismatch.slice(0, 10)) out.push(`MISMATCH ${m.kind} ${m.label}: expected ${m.expected}, got ${m.got}`)
  for (const w of witnessBad.slice(0, 10)) out.push(`WITNESS NOT CONFIRMED ${w}`)
  process.stdout.write(out.join('\n') + '\n')
}
process.exit(failed ? 1 : 0)
