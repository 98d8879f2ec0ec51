import { describe, expect, it } from 'vitest'
import { failures, oneEvent, run, ue, webhookPayload } from './helpers'

const FORM = 'application/x-www-form-urlencoded'
const olark = (contentType: string | null, body: string | null) => webhookPayload('com.olark', 'v1', { contentType, body })
const data = (doc: string) => `data=${encodeURIComponent(doc)}`

const TRANSCRIPT =
  '{"kind": "Conversation", "tags": ["olark", "customer"], "items": [{"body": "Hi there. Need any help?", "timestamp": "1307116657.1", "kind": "MessageToVisitor", "visitor_nickname": "John", "nickname": "John", "operatorId": "1234"}, {"body": "Yes, please help me with billing.", "timestamp": "1307116661.25", "kind": "MessageToOperator", "nickname": "Bob"}], "operators": {"1234": {"username": "jdoe", "emailAddress": "john@example.com", "kind": "Operator", "nickname": "John", "id": "1234"}}, "groups": [{"kind": "Group", "name": "My Sales Group", "id": "0123456789abcdef"}], "visitor": {"ip": "123.4.56.78", "city": "Palo Alto", "kind": "Visitor", "conversationBeginPage": "http://www.example.com/path", "countryCode": "US", "country": "United State", "region": "CA", "chat_feedback": {"overall_chat": 5, "responsiveness": 5, "friendliness": 5, "knowledge": 5, "comments": "Very helpful, thanks"}, "operatingSystem": "Windows", "emailAddress": "bob@example.com", "organization": "Widgets Inc.", "phoneNumber": "(555) 555-5555", "fullName": "Bob Doe", "customFields": {"favoriteColor": "blue", "myInternalCustomerId": "12341234"}, "id": "9QRF9YWM5XW3ZSU7P9CGWRU89944341", "browser": "Chrome 12.1"}, "id": "EV695BI2930A6XMO32886MPT899443414"}'
const OFFLINE =
  '{"kind": "Conversation", "id": "EV695BI2930A6XMO32886QPT899443414", "items": [{"kind": "OfflineMessage", "timestamp": "1307116667.1", "body": "Hi there."}], "visitor": {"kind": "Visitor", "id": "9QRF9YWM5XW3ZSU7P9CGWRU89944341", "fullName": "John Doe", "emailAddress": "foo@example.com", "phoneNumber": "(555) 555-5555", "city": "Palo Alto", "region": "CA", "country": "United States", "countryCode": "US", "organization": "Widgets Inc.", "ip": "123.4.56.78", "browser": "Chrome 12.1", "operatingSystem": "Windows", "customFields": {"myInternalCustomerId": "12341234", "favoriteColor": "blue"} }, "groups": [{"name": "My Sales Group", "id": "0123456789abcdef", "kind": "Group"}] }'

describe('Olark webhook (/com.olark/v1)', () => {
  it('turns a conversation with operators into a transcript event (timestamps converted, names camelCased)', async () => {
    expect(oneEvent(await run(olark(FORM, data(TRANSCRIPT))))).toEqual({
      tv: 'com.olark-v1',
      e: 'ue',
      p: 'srv',
      ue_pr: ue('iglu:com.olark/transcript/jsonschema/1-0-0', {
        kind: 'Conversation',
        tags: ['olark', 'customer'],
        items: [
          { body: 'Hi there. Need any help?', timestamp: '2011-06-03T15:57:37.100Z', kind: 'MessageToVisitor', visitorNickname: 'John', nickname: 'John', operatorId: '1234' },
          { body: 'Yes, please help me with billing.', timestamp: '2011-06-03T15:57:41.250Z', kind: 'MessageToOperator', nickname: 'Bob' },
        ],
        operators: { '1234': { username: 'jdoe', emailAddress: 'john@example.com', kind: 'Operator', nickname: 'John', id: '1234' } },
        groups: [{ kind: 'Group', name: 'My Sales Group', id: '0123456789abcdef' }],
        visitor: {
          ip: '123.4.56.78', city: 'Palo Alto', kind: 'Visitor', conversationBeginPage: 'http://www.example.com/path', countryCode: 'US', country: 'United State', region: 'CA',
          chatFeedback: { overallChat: 5, responsiveness: 5, friendliness: 5, knowledge: 5, comments: 'Very helpful, thanks' },
          operatingSystem: 'Windows', emailAddress: 'bob@example.com', organization: 'Widgets Inc.', phoneNumber: '(555) 555-5555', fullName: 'Bob Doe',
          customFields: { favoriteColor: 'blue', myInternalCustomerId: '12341234' }, id: '9QRF9YWM5XW3ZSU7P9CGWRU89944341', browser: 'Chrome 12.1',
        },
        id: 'EV695BI2930A6XMO32886MPT899443414',
      }),
    })
  })

  it('keeps the operators object in its order (integer-like names included)', async () => {
    const r = await run(olark(FORM, data('{"operators":{"b":1,"1234":{"x":1}},"items":[]}')))
    expect(r.ok && r.events[0]!.parameters.get('ue_pr')).toContain('"data":{"operators":{"b":1,"1234":{"x":1}},"items":[]}')
  })

  it('turns a conversation without operators into an offline_message event', async () => {
    const e = oneEvent(await run(olark(FORM, data(OFFLINE))))
    expect((e.ue_pr as any).data.schema).toBe('iglu:com.olark/offline_message/jsonschema/1-0-0')
    expect((e.ue_pr as any).data.data.items).toEqual([{ kind: 'OfflineMessage', timestamp: '2011-06-03T15:57:47.100Z', body: 'Hi there.' }])
    expect((e.ue_pr as any).data.data.visitor.customFields).toEqual({ myInternalCustomerId: '12341234', favoriteColor: 'blue' })
  })

  it('refuses a missing or empty body', async () => {
    for (const body of [null, '']) expect(failures(await run(olark(FORM, body)))).toEqual([{ field: 'body', value: null, expectation: 'empty body: no events to process' }])
  })

  it('refuses a missing or other content type (the other one not repeated)', async () => {
    expect(failures(await run(olark(null, data(TRANSCRIPT))))).toEqual([{ field: 'contentType', value: null, expectation: 'no content type: expected application/x-www-form-urlencoded' }])
    expect(failures(await run(olark('application/json', data(TRANSCRIPT))))).toEqual([{ field: 'contentType', value: null, expectation: 'expected application/x-www-form-urlencoded' }])
  })

  it('refuses a form without `data`', async () => {
    expect(failures(await run(olark(FORM, encodeURIComponent(TRANSCRIPT))))).toEqual([{ field: 'data', value: null, expectation: "missing 'data' field" }])
  })

  it('refuses `data` that is not JSON', async () => {
    const [f] = failures(await run(olark(FORM, data(TRANSCRIPT.slice(2))))) as any[]
    expect(f.field).toBe('data')
    expect(f.error).toMatch(/^invalid json: /)
  })

  it('refuses a timestamp with more than one dot', async () => {
    expect(failures(await run(olark(FORM, data('{"items":[{"timestamp":"1.2.3"}]}'))))).toEqual([{ field: 'timestamp', value: '1.2.3', expectation: 'unexpected timestamp format' }])
    expect(failures(await run(olark(FORM, data('{"items":[{"timestamp":"abc"}]}'))))).toEqual([{ field: 'timestamp', value: 'abc000', expectation: 'cannot be converted to Double' }])
  })
})
