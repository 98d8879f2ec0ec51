import { describe, expect, it } from 'vitest'
import { breakDownField, breakDownName, GA_SCHEMAS, roundHalfEven2 } from '../../../../lib/core/enrich/adapters/googleanalytics'
import { eventsOf, failures, run, ue, webhookPayload } from './helpers'

const ga = (body: string | null) => webhookPayload('com.google.analytics', 'v1', { body })
const MP = 'iglu:com.google.analytics.measurement-protocol'
const s = (name: string) => `${MP}/${name}/jsonschema/1-0-0`
const hit = (type: string) => ({ schema: s('hit'), data: { type } })
const STATIC = { tv: 'com.google.analytics.measurement-protocol-v1', e: 'ue', p: 'srv' }
const REGEX = '(pr|promo|il|cd|cm|cg)(\\d+)([a-zA-Z]*)(\\d*)([a-zA-Z]*)(\\d*)$'

/** The one event, its contexts as a set (their order carries no meaning). */
async function one(body: string) {
  const all = eventsOf(await run(ga(body)))
  expect(all).toHaveLength(1)
  const e = all[0]!
  const co = e.co as { schema: string; data: unknown[] }
  expect(co.schema).toBe('iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-1')
  return { ...e, co: sorted(co.data) }
}
const canonical = (v: unknown): string =>
  v !== null && typeof v === 'object' && !Array.isArray(v)
    ? `{${Object.keys(v).sort().map((k) => `${k}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`
    : JSON.stringify(v)
const sorted = (xs: unknown[]) => [...xs].sort((a, b) => (canonical(a) < canonical(b) ? -1 : 1))

describe('Google Analytics measurement protocol (/com.google.analytics/v1)', () => {
  it('refuses an empty body', async () => {
    expect(failures(await run(ga(null)))).toEqual([{ field: 'body', value: null, expectation: 'empty body' }])
  })

  it('refuses a hit without a type', async () => {
    expect(failures(await run(ga('dl=docloc')))).toEqual([{ field: 'body', value: 'dl=docloc', expectation: 'no t parameter provided: cannot determine hit type' }])
  })

  it('refuses an unknown hit type', async () => {
    expect(failures(await run(ga('t=unknown&dl=docloc')))).toEqual([
      { field: 't', value: 'unknown', expectation: 'no matching hit type' },
      { actual: 'unknown', expectedMapping: GA_SCHEMAS, expectation: 'no schema associated with the provided type parameter' },
    ])
  })

  it('turns a page view into a page_view event with its hit context', async () => {
    expect(await one('t=pageview&dh=host&dp=path')).toEqual({ ...STATIC, ue_pr: ue(s('page_view'), { documentHostName: 'host', documentPath: 'path' }), co: [hit('pageview')] })
  })

  it('adds the contexts of the other parameters', async () => {
    expect(await one('t=pageview&dh=host&cid=id&v=version')).toEqual({
      ...STATIC,
      ue_pr: ue(s('page_view'), { documentHostName: 'host' }),
      co: sorted([hit('pageview'), { schema: s('user'), data: { clientId: 'id' } }, { schema: s('general'), data: { protocolVersion: 'version' } }]),
    })
  })

  it('copies parameters to tracker-protocol fields', async () => {
    expect(await one('t=pageview&dp=path&uip=ip')).toEqual({
      ...STATIC,
      ip: 'ip',
      ue_pr: ue(s('page_view'), { documentPath: 'path' }),
      co: sorted([hit('pageview'), { schema: s('session'), data: { ipOverride: 'ip' } }]),
    })
  })

  it('types the values (two-decimal prices, integers, booleans)', async () => {
    expect(await one('t=item&in=name&ip=12.228&iq=12&aip=0')).toEqual({
      ...STATIC,
      ti_pr: '12.228',
      ti_qu: '12',
      ti_nm: 'name',
      ue_pr: ue(s('item'), { price: 12.23, name: 'name', quantity: 12 }),
      co: sorted([{ schema: s('general'), data: { anonymizeIp: false } }, hit('item')]),
    })
  })

  it('adds a page view context to other hits', async () => {
    expect(await one('t=exception&exd=desc&exf=1&dh=host')).toEqual({
      ...STATIC,
      ue_pr: ue(s('exception'), { description: 'desc', isFatal: true }),
      co: sorted([hit('exception'), { schema: s('page_view'), data: { documentHostName: 'host' } }]),
    })
  })

  it('builds product contexts with the currency', async () => {
    expect(await one('t=transaction&ti=tr&cu=EUR&pr12id=ident&pr12cd42=val')).toEqual({
      ...STATIC,
      tr_cu: 'EUR',
      tr_id: 'tr',
      ue_pr: ue(s('transaction'), { currencyCode: 'EUR', id: 'tr' }),
      co: sorted([
        hit('transaction'),
        { schema: s('product_custom_dimension'), data: { dimensionIndex: 42, productIndex: 12, value: 'val' } },
        { schema: s('product'), data: { currencyCode: 'EUR', sku: 'ident', index: 12 } },
      ]),
    })
  })

  it('builds impression contexts', async () => {
    expect(await one('t=pageview&dp=path&il12pi42id=s&il12pi42cd36=dim')).toEqual({
      ...STATIC,
      ue_pr: ue(s('page_view'), { documentPath: 'path' }),
      co: sorted([
        hit('pageview'),
        { schema: s('product_impression_custom_dimension'), data: { customDimensionIndex: 36, productIndex: 42, value: 'dim', listIndex: 12 } },
        { schema: s('product_impression'), data: { productIndex: 42, sku: 's', listIndex: 12 } },
      ]),
    })
  })

  it('tells a screen name from a custom dimension', async () => {
    expect(await one('t=screenview&cd=name&cd12=dim')).toEqual({
      ...STATIC,
      ue_pr: ue(s('screen_view'), { screenName: 'name' }),
      co: sorted([hit('screenview'), { schema: s('custom_dimension'), data: { value: 'dim', index: 12 } }]),
    })
  })

  it('builds one context per index', async () => {
    expect(await one('t=pageview&dp=path&pr1id=s1&pr2id=s2&pr1cd1=v1&pr1cd2=v2')).toEqual({
      ...STATIC,
      ue_pr: ue(s('page_view'), { documentPath: 'path' }),
      co: sorted([
        hit('pageview'),
        { schema: s('product_custom_dimension'), data: { dimensionIndex: 1, productIndex: 1, value: 'v1' } },
        { schema: s('product_custom_dimension'), data: { dimensionIndex: 2, productIndex: 1, value: 'v2' } },
        { schema: s('product'), data: { sku: 's1', index: 1 } },
        { schema: s('product'), data: { sku: 's2', index: 2 } },
      ]),
    })
  })

  it('builds promotion contexts', async () => {
    expect(await one('t=pageview&dp=path&promoa=action&promo12id=id')).toEqual({
      ...STATIC,
      ue_pr: ue(s('page_view'), { documentPath: 'path' }),
      co: sorted([hit('pageview'), { schema: s('promotion_action'), data: { promotionAction: 'action' } }, { schema: s('promotion'), data: { id: 'id', index: 12 } }]),
    })
  })

  it('reads one hit per line', async () => {
    const all = eventsOf(await run(ga('t=pageview&dh=host&dp=path\nt=pageview&dh=host&dp=path')))
    expect(all).toHaveLength(2)
    expect(all[0]).toEqual(all[1])
  })

  it('builds impression contexts across lists, with the currency', async () => {
    const body =
      't=pageview&dh=host&dp=path&cu=EUR&il1pi1pr=1&il1pi1nm=name1&il1pi1ps=1&il1pi1ca=cat1&il1pi1id=id1&il1pi1br=brand1&il1pi2pr=2&il1pi2nm=name2&il1pi2ps=2&il1pi2ca=cat2&il1pi2id=id2&il1pi2br=brand2&il2pi1pr=21&il2pi1nm=name21&il2pi1ps=21&il2pi1ca=cat21&il2pi1id=id21&il2pi1br=brand21'
    expect(await one(body)).toEqual({
      ...STATIC,
      ti_cu: 'EUR',
      ue_pr: ue(s('page_view'), { documentHostName: 'host', documentPath: 'path' }),
      co: sorted([
        hit('pageview'),
        { schema: s('product_impression'), data: { productIndex: 1, name: 'name1', sku: 'id1', price: 1.0, brand: 'brand1', currencyCode: 'EUR', category: 'cat1', position: 1, listIndex: 1 } },
        { schema: s('product_impression'), data: { productIndex: 2, name: 'name2', sku: 'id2', price: 2.0, brand: 'brand2', currencyCode: 'EUR', category: 'cat2', position: 2, listIndex: 1 } },
        { schema: s('product_impression'), data: { productIndex: 1, name: 'name21', sku: 'id21', price: 21.0, brand: 'brand21', currencyCode: 'EUR', category: 'cat21', position: 21, listIndex: 2 } },
      ]),
    })
  })

  it('breaks down indexed parameter names', () => {
    const regexFailure = (f: string) => ({ ok: false, failure: { field: f, value: null, expectation: `composite field name has to conform to regex ${REGEX}` } })
    expect(breakDownName('pr')).toEqual(regexFailure('pr'))
    expect(breakDownName('pr12id')).toEqual({ ok: true, strs: ['pr', 'id'], ints: ['12'] })
    expect(breakDownName('12')).toEqual(regexFailure('12'))
    expect(breakDownName('')).toEqual({ ok: false, failure: { field: '', value: null, expectation: 'cannot parse empty field name' } })
    expect(breakDownField('pr12id', 'identifier')).toEqual({ ok: true, fields: new Map([['IFpr', '12'], ['prid', 'identifier']]) })
    expect(breakDownField('pr12cm42', 'value')).toEqual({ ok: true, fields: new Map([['IFprcm', '12'], ['IFcm', '42'], ['prcm', 'value']]) })
    expect(breakDownField('pr', 'value')).toEqual(regexFailure('pr'))
    expect(breakDownField('pr12', 'val')).toEqual({ ok: true, fields: new Map([['IFpr', '12'], ['pr', 'val']]) })
  })

  it('refuses a parameter with a digit that is not an indexed one, and values of the wrong type', async () => {
    expect(failures(await run(ga('t=pageview&utm2=x')))).toEqual([{ field: 'utm2', value: null, expectation: `composite field name has to conform to regex ${REGEX}` }])
    expect(failures(await run(ga('t=event&ev=ten&qt=later')))).toEqual([{ field: 'queueTime', value: 'later', expectation: 'Cannot be converted to java.lang.Integer' }])
    expect(failures(await run(ga('t=event&ev=ten')))).toEqual([{ field: 'value', value: 'ten', expectation: 'Cannot be converted to java.lang.Integer' }])
  })

  it('rounds prices half to even', () => {
    expect(roundHalfEven2('12.228')).toBe(12.23)
    expect(roundHalfEven2('0.125')).toBe(0.12)
    expect(roundHalfEven2('0.135')).toBe(0.14)
    expect(roundHalfEven2('1e2')).toBe(100)
    expect(roundHalfEven2('x')).toBeUndefined()
  })
})

describe('Google Analytics: hostile parameter names', () => {
  it('treats names of object members (constructor, __proto__, toString) as unknown parameters', async () => {
    expect(failures(await run(ga('t=constructor')))).toEqual([
      { field: 't', value: 'constructor', expectation: 'no matching hit type' },
      { actual: 'constructor', expectedMapping: GA_SCHEMAS, expectation: 'no schema associated with the provided type parameter' },
    ])
    const [e] = eventsOf(await run(ga('t=pageview&dp=/&constructor=x&__proto__=y&toString=z&hasOwnProperty=1')))
    expect(e!.ue_pr).toEqual(ue(s('page_view'), { documentPath: '/' }))
    expect(Object.keys(e!)).not.toContain('constructor')
  })
})
