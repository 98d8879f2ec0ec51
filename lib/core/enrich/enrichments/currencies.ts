/**
 * ISO 4217 currency codes with their minor units (the decimal places amounts
 * are rounded to), including the former codes Joda-Money (and therefore
 * Snowplow's currency conversion) still accepts. Codes without minor units
 * (precious metals, testing and special drawing codes) round to whole units.
 */

const PLACES_0 =
  'ADP BEF BIF BYR CLP DJF ESP GNF GRD ISK ITL JPY KMF KRW LUF PYG PTE RWF UGX UYI VND VUV XAF XAG XAU XBA XBB XBC XBD XDR XEU XFU XOF XPD XPF XPT XSU XTS XUA XXX'
const PLACES_2 =
  'AED AFN ALL AMD ANG AOA ARS ATS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BOV BRL BSD BTN BWP BYN BZD CAD CDF CHE CHF CHW CNY COP COU CRC CUC CUP CVE CYP CZK DEM DKK DOP DZD EEK EGP ERN ETB EUR FIM FJD FKP FRF GBP GEL GHS GIP GMD GTQ GYD HKD HNL HRK HTG HUF IDR IEP ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL LTL LVL MAD MDL MGA MKD MMK MNT MOP MRO MRU MTL MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NLG NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB RUR SAR SBD SCR SDG SEK SGD SHP SIT SKK SLE SLL SOS SRD SSP STD STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VEF VES WST XCD XCG YER ZAR ZMW ZWG ZWL'
const PLACES_3 = 'BHD IQD JOD KWD LYD OMR TND'
const PLACES_4 = 'CLF'

const PLACES = new Map<string, number>()
for (const [list, places] of [[PLACES_0, 0], [PLACES_2, 2], [PLACES_3, 3], [PLACES_4, 4]] as const) for (const c of list.split(' ')) PLACES.set(c, places)

/** The decimal places of a currency code (exact, case-sensitive), undefined for a code that is not one. */
export function currencyPlaces(code: string): number | undefined {
  return PLACES.get(code)
}

/** How many codes are known. */
export const CURRENCY_COUNT = PLACES.size
