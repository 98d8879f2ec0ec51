/**
 * `referer_parser`: the cases of Snowplow's RefererParserEnrichmentSpec on a
 * small database of our own, the lookup rules, the fields in the enricher,
 * and the referer-parser project's own 118 cases on its real database when
 * that database is available (it is GPL data and is not part of the
 * repository; see test/support/upstream.ts).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Enricher } from '../../../../lib/core/enrich/enrich'
import { loadReferers, lookupReferer, refererOfUrl, searchTerm } from '../../../../lib/core/enrich/enrichments/referer-parser'
import { assetsOf, buildEnrichments, loadEnrichmentConfigs } from '../../../../lib/core/enrich/enrichments/registry'
import { ENRICH_PROCESSOR } from '../../../../lib/core/enrich/version'
import { projectRoot } from '../../../../lib/local/handlers'
import { upstreamAsset } from '../../../support/upstream'
import { batch, columns, only, payload, resolver } from '../helpers'

const FIXTURE = join(projectRoot, 'test/fixtures/referer-parser/referers.json')
const db = loadReferers(JSON.parse(readFileSync(FIXTURE, 'utf8')), FIXTURE)
const PAGE_HOST = 'www.snowplowanalytics.com'

describe('referer_parser', () => {
  it('classifies the referrers of Snowplow\'s spec', () => {
    const internal = ['www.internaldomain.com']
    const cases: [string, object][] = [
      ['http://www.google.com/search?q=gateway+oracle+cards+denise+linn&hl=en&client=safari', { medium: 'search', source: 'Google', term: 'gateway oracle cards denise linn' }],
      ['http://www.facebook.com/l.php?u=http%3A%2F%2Fwww.psychicbazaar.com&h=yAQHZtXxS&s=1', { medium: 'social', source: 'Facebook', term: null }],
      ['http://36ohk6dgmcd1n-c.c.yom.mail.yahoo.net/om/api/1.0/openmail.app.invoke/36ohk6dgmcd1n/11/1.0.35/us/en-US/view.html/0', { medium: 'email', source: 'Yahoo! Mail', term: null }],
      ['https://www.chatgpt.com', { medium: 'chatbot', source: 'ChatGPT', term: null }],
      ['https://www.snowplowanalytics.com/account/profile', { medium: 'internal' }],
      ['https://www.internaldomain.com/path', { medium: 'internal' }],
      ['http://www.spyfu.com/domain.aspx?d=3897225171967988459', { medium: 'unknown' }],
    ]
    for (const [url, want] of cases) expect(refererOfUrl(db, internal, url, PAGE_HOST), url).toEqual(want)
  })

  it('looks up host + path, host + first segment, then parent domains, then hosts alone', () => {
    expect(lookupReferer(db, 'www.google.com', '/imgres')?.source).toBe('Google Images')
    expect(lookupReferer(db, 'www.google.com', '/search')?.source).toBe('Google')
    expect(lookupReferer(db, 'mail.example.fr', '/webmail/fr_FR/read.html')?.source).toBe('Example Webmail')
    expect(lookupReferer(db, 'portal.example.net', '/search/results')?.source).toBe('Portal Search')
    expect(lookupReferer(db, 'portal.example.net', '/other')).toBeUndefined()
    expect(lookupReferer(db, 'a.b.m.facebook.com', '/')?.source).toBe('Facebook')
    expect(lookupReferer(db, 'support.google.com', '/')?.medium).toBe('unknown')
    expect(lookupReferer(db, 'localhost', '/')).toBeUndefined()
  })

  it('takes the search term from the first configured parameter, form-decoded', () => {
    expect(searchTerm('x=1&term=caf%C3%A9+cr%C3%A8me&q=other', ['term', 'q'])).toBe('café crème')
    expect(searchTerm('a=1;q=semi', ['q'])).toBe('semi')
    expect(searchTerm('q', ['q'])).toBeNull()
    expect(searchTerm('q=100%', ['q'])).toBe('100%')
    expect(searchTerm(null, ['q'])).toBeNull()
    expect(refererOfUrl(db, [], 'https://bare.example.org/?q=x', PAGE_HOST)).toEqual({ medium: 'search', source: 'Bare Search', term: null })
  })

  it('reads only http, https and android-app referrers', () => {
    expect(refererOfUrl(db, [], 'android-app://com.facebook.katana', PAGE_HOST)).toEqual({ medium: 'social', source: 'Facebook', term: null })
    expect(refererOfUrl(db, [], 'ftp://www.google.com/search?q=x', PAGE_HOST)).toBeUndefined()
    expect(refererOfUrl(db, [], 'mailto:someone@example.com', PAGE_HOST)).toBeUndefined()
  })

  it('refuses a database that is not one, saying where', () => {
    expect(() => loadReferers([], 'db.json')).toThrow('db.json is not a referer database')
    expect(() => loadReferers({ search: { X: { parameters: ['q'] } } }, 'db.json')).toThrow('db.json: search.X has no list of domains')
  })

  async function enricher(parameters: object) {
    const text = JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/referer_parser/jsonschema/2-0-1', data: { vendor: 'com.snowplowanalytics.snowplow', name: 'referer_parser', enabled: true, parameters } })
    const r = await loadEnrichmentConfigs([{ source: 'referer_parser.json', text }], resolver)
    if (!r.ok) throw new Error(r.errors.join())
    expect(assetsOf(r.configs).map((a) => a.location)).toEqual([`file://${FIXTURE}`])
    const built = await buildEnrichments(r.configs, { assets: { path: () => FIXTURE }, legacyOrder: false })
    if (!built.ok) throw new Error(built.errors.join())
    const e = new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true, enrichments: built.enrichments })
    return async (url: string, refr: string) =>
      columns((only(await e.enrichRecord(payload({ path: '/i', querystring: `e=pv&p=web&tv=js-3&url=${encodeURIComponent(url)}&refr=${encodeURIComponent(refr)}` }), batch()), 'good')[0] as { tsv: string }).tsv)
  }

  it('sets refr_medium, refr_source and refr_term in enriched events, tabs and newlines in terms made safe', async () => {
    const run = await enricher({ uri: `file://${join(projectRoot, 'test/fixtures/referer-parser')}`, database: 'referers.json', internalDomains: ['blog.acme.com'] })
    const c = await run('https://www.acme.com/', 'http://www.google.com/search?q=%0Agateway%09oracle%09cards&hl=en')
    expect([c.refr_medium, c.refr_source, c.refr_term, c.refr_urlhost]).toEqual(['search', 'Google', 'gateway    oracle    cards', 'www.google.com'])
    const internal = await run('https://www.acme.com/', 'https://www.acme.com/pricing')
    expect([internal.refr_medium, internal.refr_source, internal.refr_term]).toEqual(['internal', '', ''])
    expect((await run('https://www.acme.com/', 'https://blog.acme.com/post')).refr_medium).toBe('internal')
    expect((await run('https://www.acme.com/', 'https://nowhere.example/')).refr_medium).toBe('unknown')
    const none = await run('https://www.acme.com/', 'ftp://files.example/')
    expect([none.refr_medium, none.refr_urlscheme]).toEqual(['', 'ftp'])
  })

  it('adds the configuration\'s own referrers, which win over the database', async () => {
    const run = await enricher({
      uri: `file://${join(projectRoot, 'test/fixtures/referer-parser')}`, database: 'referers.json', internalDomains: [],
      referrers: { search: { MyDomain: { domains: ['acme.com'] }, 'My Google': { domains: ['google.fr'], parameters: ['q'] } } },
    })
    const acme = await run('https://shop.example/', 'http://www.acme.com?whatever')
    expect([acme.refr_medium, acme.refr_source, acme.refr_term]).toEqual(['search', 'MyDomain', ''])
    expect((await run('https://shop.example/', 'https://www.google.fr/?q=x')).refr_source).toBe('My Google')
  })
})

// The referer-parser project's own cases, on its real database, when those upstream assets are available.
const CASES = upstreamAsset('referer-parser/referer-tests.json', "referer_parser: the referer-parser project's 118 cases")
const DATABASE = upstreamAsset('referer-parser/referers-latest.json', "referer_parser: the referer-parser project's database")
describe.skipIf(!CASES || !DATABASE)('referer_parser on the referer-parser project\'s database (its 118 cases)', () => {
  it('passes every case', () => {
    const real = loadReferers(JSON.parse(readFileSync(DATABASE!, 'utf8')), 'referers-latest.json')
    const cases = JSON.parse(readFileSync(CASES!, 'utf8')) as { spec: string; uri: string; medium: string; source: string; term: string | null }[]
    expect(cases).toHaveLength(118)
    const failing = cases.filter((c) => {
      const r = refererOfUrl(real, [], c.uri, 'www.snowplowanalytics.com')
      return JSON.stringify(r) !== JSON.stringify({ medium: c.medium, source: c.source, term: c.term })
    }).map((c) => `${c.spec}: ${JSON.stringify(refererOfUrl(real, [], c.uri, 'www.snowplowanalytics.com'))}`)
    expect(failing).toEqual([])
  })
})
