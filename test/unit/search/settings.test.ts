/** The search store's settings from the environment: defaults, and a setting that cannot work refused with its rule. */
import { describe, expect, it } from 'vitest'
import { searchTimeoutMs } from '../../../lib/core/search/settings'

describe('FLOE_SEARCH_TIMEOUT_MS', () => {
  it('defaults to 10 s, takes whole milliseconds from 100 to 25,000, and refuses anything else', () => {
    expect(searchTimeoutMs({})).toBe(10_000)
    expect(searchTimeoutMs({ FLOE_SEARCH_TIMEOUT_MS: '' })).toBe(10_000)
    expect(searchTimeoutMs({ FLOE_SEARCH_TIMEOUT_MS: '2500' })).toBe(2_500)
    for (const bad of ['99', '25001', '1.5', 'soon', '-1']) expect(() => searchTimeoutMs({ FLOE_SEARCH_TIMEOUT_MS: bad }), bad).toThrow(/FLOE_SEARCH_TIMEOUT_MS must be a whole number of milliseconds from 100 to 25000/)
  })
})
