/**
 * `yauaa_enrichment_config`: the user agents and expected fields of
 * Snowplow's YauaaEnrichmentSpec (YAUAA's own answers), which the fields the
 * README calls exact must reproduce, plus the client hints, the defaults and
 * the context in the enricher.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { analyseUserAgent, clientHints, hasClientHints, loadDetector } from '../../../../lib/core/enrich/enrichments/yauaa'
import { batch, configuredEnricher, derivedOf, enrichmentConfig, goodColumns, payload } from '../helpers'

const UA = {
  ipad: 'Mozilla/5.0 (iPad; CPU OS 6_1_3 like Mac OS X) AppleWebKit/536.26 (KHTML, like Gecko) Version/6.0 Mobile/10B329 Safari/8536.25',
  iphoneX: 'Mozilla/5.0 (iPhone; CPU iPhone OS 11_0 like Mac OS X) AppleWebKit/604.1.38 (KHTML, like Gecko) Version/11.0 Mobile/15A372 Safari/604.1',
  iphone7: 'Mozilla/5.0 (iPhone9,3; U; CPU iPhone OS 10_0_1 like Mac OS X) AppleWebKit/602.1.50 (KHTML, like Gecko) Version/10.0 Mobile/14A403 Safari/602.1',
  galaxyTab: 'Mozilla/5.0 (Linux; U; Android 2.2; fr-fr; GT-P1000 Build/FROYO) AppleWebKit/533.1 (KHTML, like Gecko) Version/4.0 Mobile Safari/533.1',
  galaxyS9: 'Mozilla/5.0 (Linux; Android 8.0.0; SM-G960F Build/R16NW) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/62.0.3202.84 Mobile Safari/537.36',
  galaxyS8: 'Mozilla/5.0 (Linux; Android 7.0; SM-G892A Build/NRD90M; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/60.0.3112.107 Mobile Safari/537.36',
  xperiaXZ: 'Mozilla/5.0 (Linux; Android 7.1.1; G8231 Build/41.2.A.0.219; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/59.0.3071.125 Mobile Safari/537.36',
  nexusOne: 'Mozilla/5.0 (Linux; U; Android 2.2; en-us; Nexus One Build/FRF91) AppleWebKit/533.1 (KHTML, like Gecko) Version/4.0 Mobile Safari/533.1',
  nexusS: 'Mozilla/5.0 (Linux; Android 4.1.2; Nexus S Build/JZO54K) AppleWebKit/535.19 (KHTML, like Gecko) Chrome/18.0.1025.166 Mobile Safari/535.19',
  playstation4: 'Mozilla/5.0 (PlayStation 4 1.52) AppleWebKit/536.26 (KHTML, like Gecko)',
  chrome13: 'Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/535.1 (KHTML, like Gecko) Chrome/13.0.782.112 Safari/535.1',
  chrome106: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/106.0.0.0 Safari/537.36',
  chromium: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.22 (KHTML, like Gecko) Ubuntu Chromium/25.0.1364.160 Chrome/25.0.1364.160 Safari/537.22',
  firefox: 'Mozilla/5.0 (Windows NT 6.1; rv:2.0b7pre) Gecko/20100921 Firefox/4.0b7pre',
  ie: 'Mozilla/5.0 (compatible; MSIE 9.0; Windows NT 6.0; Trident/5.0)',
  opera: 'Mozilla/4.0 (compatible; MSIE 6.0; MSIE 5.5; Windows NT 5.0) Opera 7.02 Bork-edition [en]',
  safari: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_8_4) AppleWebKit/536.30.1 (KHTML, like Gecko) Version/6.0.5 Safari/536.30.1',
  googleBot: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
} as const

/** YAUAA's answers, from Snowplow's spec: field → user agent → value. */
const EXPECTED: Record<string, Partial<Record<keyof typeof UA, string>>> = {
  deviceClass: { chromium: 'Desktop', galaxyTab: 'Tablet', ipad: 'Tablet', nexusS: 'Phone', playstation4: 'Game Console', googleBot: 'Robot' },
  deviceName: { galaxyS9: 'Samsung SM-G960F', galaxyS8: 'Samsung SM-G892A', xperiaXZ: 'Sony G8231', iphone7: 'Apple iPhone', iphoneX: 'Apple iPhone', nexusS: 'Google Nexus S', nexusOne: 'Google Nexus ONE', playstation4: 'Sony PlayStation 4', googleBot: 'Google' },
  operatingSystemClass: { chromium: 'Desktop', ie: 'Desktop', ipad: 'Mobile', nexusS: 'Mobile', playstation4: 'Game Console', googleBot: 'Cloud' },
  operatingSystemName: { chromium: 'Ubuntu', ie: 'Windows NT', nexusOne: 'Android', iphoneX: 'iOS', ipad: 'iOS', safari: 'Mac OS', googleBot: 'Google Cloud' },
  layoutEngineClass: { chrome13: 'Browser', ie: 'Browser', nexusOne: 'Browser', iphoneX: 'Browser', ipad: 'Browser', safari: 'Browser', playstation4: 'Browser', googleBot: 'Robot' },
  agentClass: { chromium: 'Browser', ie: 'Browser', nexusOne: 'Browser', iphoneX: 'Browser', ipad: 'Browser', safari: 'Browser', playstation4: 'Browser', googleBot: 'Robot' },
  agentName: { chrome13: 'Chrome', chromium: 'Chromium', firefox: 'Firefox', ie: 'Internet Explorer', nexusOne: 'Stock Android Browser', iphoneX: 'Safari', ipad: 'Safari', opera: 'Opera', safari: 'Safari', googleBot: 'Googlebot' },
}

/** Where this enrichment's answer differs from YAUAA's in the table above (YAUAA's own spelling of one model). */
const KNOWN_DIFFERENCES: Record<string, string> = { 'deviceName of nexusOne': 'Google Nexus One' }

/**
 * Current user agents: the fields whose values follow YAUAA's conventions
 * (class names, agent names, major versions), as this enrichment answers.
 */
const CURRENT: [string, Record<string, string>][] = [
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.2210.91', { deviceClass: 'Desktop', operatingSystemName: 'Windows NT', agentClass: 'Browser', agentNameVersionMajor: 'Edge 120', layoutEngineNameVersionMajor: 'Blink 120', deviceCpu: 'Intel x86_64', deviceCpuBits: '64' }],
  ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:121.0) Gecko/20100101 Firefox/121.0', { deviceClass: 'Desktop', deviceName: 'Apple Macintosh', operatingSystemName: 'Mac OS', agentNameVersionMajor: 'Firefox 121', layoutEngineName: 'Gecko' }],
  ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_1_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1.2 Mobile/15E148 Safari/604.1', { deviceClass: 'Phone', deviceName: 'Apple iPhone', operatingSystemNameVersion: 'iOS 17.1.2', agentNameVersionMajor: 'Safari 17', layoutEngineName: 'AppleWebKit' }],
  ['Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36', { deviceClass: 'Phone', operatingSystemNameVersionMajor: 'Android 10', agentNameVersion: 'Chrome 120' }],
  ['Mozilla/5.0 (Linux; Android 13; SAMSUNG SM-S911B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/23.0 Chrome/115.0.0.0 Mobile Safari/537.36', { deviceClass: 'Phone', deviceName: 'Samsung SM-S911B', deviceBrand: 'Samsung', layoutEngineNameVersionMajor: 'Blink 115' }],
  ['Mozilla/5.0 (Linux; Android 12; Pixel 6) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0.6045.163 Mobile Safari/537.36', { deviceClass: 'Phone', deviceName: 'Google Pixel 6', agentNameVersion: 'Chrome 119.0.6045.163' }],
  ['Mozilla/5.0 (iPad; CPU OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/120.0.6099.119 Mobile/15E148 Safari/604.1', { deviceClass: 'Tablet', deviceName: 'Apple iPad', agentName: 'Chrome', operatingSystemName: 'iOS' }],
  ['Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36', { deviceClass: 'Desktop', operatingSystemClass: 'Desktop', agentName: 'Chrome' }],
  ['Mozilla/5.0 (SMART-TV; Linux; Tizen 6.0) AppleWebKit/537.36 (KHTML, like Gecko) 85.0.4183.93/6.0 TV Safari/537.36', { deviceClass: 'TV', operatingSystemName: 'Tizen' }],
  ['Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)', { deviceClass: 'Robot', agentClass: 'Robot', operatingSystemClass: 'Cloud', agentInformationUrl: 'http://www.bing.com/bingbot.htm' }],
  ['Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', { deviceClass: 'Robot Mobile', agentClass: 'Robot Mobile', agentName: 'Googlebot', agentVersion: '2.1' }],
  ['curl/8.4.0', { deviceClass: 'Unknown', agentClass: 'Special', agentNameVersion: 'curl 8.4.0' }],
]

beforeAll(loadDetector)

describe('yauaa_enrichment_config', () => {
  it('reports every case of the table', () => {
    const wrong: string[] = []
    for (const [field, byUa] of Object.entries(EXPECTED)) {
      for (const [ua, want] of Object.entries(byUa)) {
        const got = analyseUserAgent(UA[ua as keyof typeof UA])[field]
        if (got !== (KNOWN_DIFFERENCES[`${field} of ${ua}`] ?? want)) wrong.push(`${field} of ${ua}: ${got} (YAUAA: ${want})`)
      }
    }
    expect(wrong).toEqual([])
  })

  it('gives the whole context of Snowplow\'s spec for a Galaxy S9', () => {
    expect(analyseUserAgent(UA.galaxyS9)).toEqual({
      deviceBrand: 'Samsung', deviceName: 'Samsung SM-G960F', deviceClass: 'Phone',
      layoutEngineClass: 'Browser', layoutEngineName: 'Blink', layoutEngineVersion: '62.0', layoutEngineVersionMajor: '62', layoutEngineNameVersion: 'Blink 62.0', layoutEngineNameVersionMajor: 'Blink 62',
      operatingSystemClass: 'Mobile', operatingSystemName: 'Android', operatingSystemVersion: '8.0.0', operatingSystemVersionMajor: '8', operatingSystemNameVersion: 'Android 8.0.0', operatingSystemNameVersionMajor: 'Android 8', operatingSystemVersionBuild: 'R16NW',
      agentClass: 'Browser', agentName: 'Chrome', agentVersion: '62.0.3202.84', agentVersionMajor: '62', agentNameVersion: 'Chrome 62.0.3202.84', agentNameVersionMajor: 'Chrome 62',
      agentInformationEmail: 'Unknown', networkType: 'Unknown',
      webviewAppName: 'Unknown', webviewAppVersion: '??', webviewAppVersionMajor: '??', webviewAppNameVersion: 'Unknown ??', webviewAppNameVersionMajor: 'Unknown ??',
    })
  })

  it('answers deviceClass Unknown alone for a missing or empty user agent', () => {
    expect(analyseUserAgent(null)).toEqual({ deviceClass: 'Unknown' })
    expect(analyseUserAgent('')).toEqual({ deviceClass: 'Unknown' })
  })

  it('finds client hints without building anything exactly when clientHints finds some', () => {
    const names = ['Sec-CH-UA', 'sec-ch-ua-platform', 'SEC-CH-UA-MOBILE', 'Sec-CH-U', 'sec-ch-uaX', 'Sec-Fetch-Mode', 'X-Sec-CH-UA', 'sec-ch-ua ', 'ſec-ch-ua', 'Sec-ch-ua-İ', 'User-Agent', '']
    const seps = [': ', ':', ' : ', ':  ']
    for (const n of names) {
      for (const sep of seps) {
        const headers = ['Host: x', `${n}${sep}"Chromium";v="124"`]
        expect(hasClientHints(headers), JSON.stringify(headers)).toBe(Object.keys(clientHints(headers)).length > 0)
      }
    }
    expect(hasClientHints([])).toBe(false)
  })

  it('uses the client hints', () => {
    expect(analyseUserAgent(UA.chrome106).agentNameVersion).toBe('Chrome 106')
    const hints = clientHints(['Sec-CH-UA-Full-Version-List: "Chromium";v="106.0.5249.119", "Google Chrome";v="106.0.5249.119", "Not;A=Brand";v="99.0.0.0"', 'Accept: */*'])
    expect(hints).toEqual({ 'sec-ch-ua-full-version-list': '"Chromium";v="106.0.5249.119", "Google Chrome";v="106.0.5249.119", "Not;A=Brand";v="99.0.0.0"' })
    expect(analyseUserAgent(UA.chrome106, hints).agentNameVersion).toBe('Chrome 106.0.5249.119')
  })

  it('answers current user agents by YAUAA\'s conventions', () => {
    for (const [ua, want] of CURRENT) expect(analyseUserAgent(ua), ua).toMatchObject(want)
  })

  it('stays within the context schema\'s limits on hostile user agents', () => {
    const long = `Mozilla/5.0 (Linux; Android 13; ${'X'.repeat(5000)}) AppleWebKit/537.36 Chrome/120.0.0.0 Mobile Safari/537.36`
    const f = analyseUserAgent(long)
    expect(f.deviceName!.length).toBeLessThanOrEqual(256)
    const odd = 'useragent=Mozilla/5.0 (Linux armv7l) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/38.0.2125.122 Safari/537.36 OPR/25.0.1620.0 OMI/4.3.18.7.Dominik.0 VSTVB MB100 HbbTV/1.2.1 (; PANASONIC; MB100; 0.1.34.28; ;) SmartTvA/3.0.0 UID (00:09:DF:A7:74:6B/MB100/PANASONIC/0.1.34.28)'
    expect(JSON.stringify(analyseUserAgent(odd))).not.toContain('SyntaxError')
  })

  it('adds the context in enriched events, the request\'s user agent and client hints analysed, and it validates', async () => {
    const e = await configuredEnricher([enrichmentConfig('com.snowplowanalytics.snowplow.enrichments', 'yauaa_enrichment_config', '1-0-0', { cacheSize: 10 })])
    const run = async (ua: string | undefined, headers: string[] = []) => goodColumns(await e.enrichRecord(payload({ path: '/i', querystring: 'e=pv&p=web&tv=js-3', ...(ua ? { userAgent: ua } : {}), headers }), batch()))
    const c = await run(UA.chrome106, ['Sec-CH-UA-Full-Version-List: "Google Chrome";v="106.0.5249.119"'])
    expect(derivedOf(c)).toMatchObject([{ schema: 'iglu:nl.basjes/yauaa_context/jsonschema/1-0-5', data: { agentNameVersion: 'Chrome 106.0.5249.119', deviceClass: 'Desktop' } }])
    expect(derivedOf(await run(UA.chrome106))[0]!.data.agentNameVersion).toBe('Chrome 106')
    expect(derivedOf(await run(undefined))).toEqual([{ schema: 'iglu:nl.basjes/yauaa_context/jsonschema/1-0-5', data: { deviceClass: 'Unknown' } }])
    for (const [ua] of CURRENT) expect(derivedOf(await run(ua)), ua).toHaveLength(1)
  })
})
