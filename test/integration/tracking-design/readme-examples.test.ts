/**
 * The example requests of lib/core/tracking-design/README.md, run in order against a local stack:
 * every ```sh block whose first line is `# example: <name>` holds one curl command and a
 * `# expect: <status>` line; the data structure they use is the schema the ```sh block after
 * `<!-- example: data structure -->` writes (its heredoc). test/e2e/docs-walkthroughs.test.ts
 * runs every block as written.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { call } from '../../support/http'
import { useTenant } from './helpers'

const README = readFileSync(join(__dirname, '../../../lib/core/tracking-design/README.md'), 'utf8')

interface Example {
  name: string
  expect: number
  command: string
  /** The text of the ```json block that follows, when there is one. */
  response?: string
}

function examples(text: string): Example[] {
  const out: Example[] = []
  const re = /```sh\n# example: ([^\n]+)\n([\s\S]*?)```(?:\n```json\n([\s\S]*?)```)?/g
  for (const m of text.matchAll(re)) {
    const status = /^# expect: (\d{3})$/m.exec(m[2]!)
    if (!status) throw new Error(`example ${m[1]} has no "# expect: <status>" line`)
    const command = m[2]!.split('\n').filter((l) => !l.startsWith('#')).join('\n').replace(/\\\n/g, ' ').trim()
    out.push({ name: m[1]!.trim(), expect: Number(status[1]), command, response: m[3] })
  }
  return out
}

/** Shell words with single and double quotes (variables expanded in double quotes and bare words). */
function words(command: string, vars: Record<string, string>): string[] {
  const expand = (s: string) => s.replace(/\$([A-Z_]+)/g, (_, v: string) => {
    if (!(v in vars)) throw new Error(`unknown variable $${v}`)
    return vars[v]!
  })
  const out: string[] = []
  const re = /\s*(?:'([^']*)'|"((?:[^"\\]|\\.)*)"|([^\s'"]+))/gy
  let cur: string | undefined
  let last = 0
  for (let m = re.exec(command); m; m = re.exec(command)) {
    const joined = m[0].length > 0 && !/^\s/.test(m[0]) && cur !== undefined && m.index === last
    const piece = m[1] ?? (m[2] !== undefined ? expand(m[2].replace(/\\(.)/g, '$1')) : expand(m[3]!))
    if (joined) cur += piece
    else {
      if (cur !== undefined) out.push(cur)
      cur = piece
    }
    last = re.lastIndex
  }
  if (cur !== undefined) out.push(cur)
  return out
}

/** The request a curl command makes: method, URL, headers, body. */
function curl(argv: string[]) {
  if (argv[0] !== 'curl') throw new Error(`not a curl command: ${argv.join(' ')}`)
  let method: string | undefined
  let url: string | undefined
  let body: string | undefined
  const headers: Record<string, string> = {}
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!
    if (a === '-s' || a === '--silent') continue
    else if (a === '-X' || a === '--request') method = argv[++i]
    else if (a === '-H' || a === '--header') {
      const h = argv[++i]!
      const c = h.indexOf(':')
      headers[h.slice(0, c).trim()] = h.slice(c + 1).trim()
    } else if (a === '-d' || a === '--data' || a === '--data-raw') body = argv[++i]
    else if (a.startsWith('-')) throw new Error(`unsupported curl option ${a}`)
    else url = a
  }
  if (!url) throw new Error(`no URL in ${argv.join(' ')}`)
  return { method: method ?? (body !== undefined ? 'POST' : 'GET'), url, headers, body }
}

const STRUCTURE = JSON.parse(/<!-- example: data structure -->\n```sh\n[\s\S]*?<<'JSON'\n([\s\S]*?)\nJSON\n/.exec(README)![1]!)
const { self } = STRUCTURE
const { t } = useTenant({ [`iglu:${self.vendor}/${self.name}/${self.format}/${self.version}`]: STRUCTURE })
const list = examples(README)

describe('the README examples', () => {
  it('cover token, create, edit, publish and list, each with a JSON body where it sends one', () => {
    expect(list.map((e) => e.name)).toEqual(expect.arrayContaining(['token', 'create', 'edit', 'publish', 'list']))
    for (const e of list) {
      const r = curl(words(e.command, { BASE: 'b', TOKEN: 't', API_KEY_ID: 'k', API_KEY: 'k' }))
      if (r.body !== undefined) expect(() => JSON.parse(r.body!), e.name).not.toThrow()
    }
  })

  it('answer with the documented statuses, in order', async () => {
    const vars = () => ({ BASE: t.base, TOKEN: t.token, API_KEY_ID: t.keyId, API_KEY: t.secret })
    const replies: Record<string, Awaited<ReturnType<typeof call>>> = {}
    for (const e of list) {
      const r = curl(words(e.command, vars()))
      const reply = await call(r.url, r.method, { headers: r.headers, body: r.body })
      expect(reply.status, `${e.name}: ${reply.text}`).toBe(e.expect)
      replies[e.name] = reply
    }
    expect(typeof replies.token!.body.accessToken).toBe('string')
    const id = replies.create!.body.data[0].id
    expect(replies.edit!.body.data[0]).toMatchObject({ id, version: 1, status: 'draft' })
    expect(replies.publish!.body.data[0]).toMatchObject({ id, version: 2, status: 'published' })
    expect(replies.list!.body.data.map((s: { id: string }) => s.id)).toEqual([id])
    expect(replies.list!.body.includes).toMatchObject([{ type: 'History', eventSpecId: id, version: 2 }])
  })

  it('show the witness and the reason of the 422 as the API gives them', async () => {
    const e = list.find((x) => x.expect === 422 && x.response?.includes('"witness"'))
    expect(e, 'an example of an incompatible schema').toBeDefined()
    const r = curl(words(e!.command, { BASE: t.base, TOKEN: t.token, API_KEY_ID: t.keyId, API_KEY: t.secret }))
    const reply = await call(r.url, r.method, { headers: r.headers, body: r.body })
    expect(reply.status).toBe(422)
    const documented = JSON.parse(`{${/"witness": [^\n]*\n\s*"reason": "(?:[^"\\]|\\.)*"/.exec(e!.response!)![0]}}`)
    expect(reply.body.errors[0]).toMatchObject(documented)
  })
})
