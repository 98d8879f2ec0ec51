import { BatchGetItemCommand, CreateTableCommand, GetItemCommand, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { beforeAll, describe, expect, it } from 'vitest'
import { ItemReader } from '../../../lib/aws/dynamo'
import { testClients, uniquePrefix } from '../../support/stack'

const prefix = uniquePrefix('reader')
const ONE = `${prefix}-one` // pk only
const TWO = `${prefix}-two` // pk + sk
let ddb: DynamoDBClient

/** The commands a client sent, by name. */
function counted(client: DynamoDBClient): { client: Pick<DynamoDBClient, 'send'>; calls: string[] } {
  const calls: string[] = []
  return { calls, client: { send: ((cmd: { constructor: { name: string } }) => (calls.push(cmd.constructor.name), client.send(cmd as never))) as DynamoDBClient['send'] } }
}

beforeAll(async () => {
  ddb = testClients().ddb
  await ddb.send(new CreateTableCommand({ TableName: ONE, BillingMode: 'PAY_PER_REQUEST', AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }], KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }] }))
  await ddb.send(new CreateTableCommand({
    TableName: TWO,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' }],
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
  }))
  for (let i = 0; i < 150; i++) await ddb.send(new PutItemCommand({ TableName: ONE, Item: { pk: { S: `k${i}` }, n: { N: String(i) } } }))
  await ddb.send(new PutItemCommand({ TableName: TWO, Item: { pk: { S: 'org' }, sk: { S: 'a' }, v: { S: 'A' } } }))
  await ddb.send(new PutItemCommand({ TableName: TWO, Item: { pk: { S: 'org' }, sk: { S: 'b' }, v: { S: 'B' } } }))
}, 60_000)

describe('ItemReader (DynamoDB Local)', () => {
  it('reads the items asked for in one turn with one call, across tables; a key asked twice is read once', async () => {
    const { client, calls } = counted(ddb)
    const reader = new ItemReader(client)
    const [a, b, again, missing, k7] = await Promise.all([
      reader.get(TWO, { pk: { S: 'org' }, sk: { S: 'a' } }),
      reader.get(TWO, { sk: { S: 'b' }, pk: { S: 'org' } }),
      reader.get(TWO, { pk: { S: 'org' }, sk: { S: 'a' } }),
      reader.get(TWO, { pk: { S: 'org' }, sk: { S: 'zz' } }),
      reader.get(ONE, { pk: { S: 'k7' } }),
    ])
    expect(calls).toEqual(['BatchGetItemCommand'])
    expect(a?.v?.S).toBe('A')
    expect(b?.v?.S).toBe('B')
    expect(again).toEqual(a)
    expect(missing).toBeUndefined()
    expect(k7?.n?.N).toBe('7')
  })

  it('a lone read is a GetItem; reads in later turns are later calls', async () => {
    const { client, calls } = counted(ddb)
    const reader = new ItemReader(client)
    expect((await reader.get(ONE, { pk: { S: 'k1' } }))?.n?.N).toBe('1')
    expect(await reader.get(ONE, { pk: { S: 'none' } })).toBeUndefined()
    expect(calls).toEqual(['GetItemCommand', 'GetItemCommand'])
  })

  it('splits more than 100 keys into calls of at most 100', async () => {
    const { client, calls } = counted(ddb)
    const reader = new ItemReader(client)
    const items = await Promise.all(Array.from({ length: 150 }, (_, i) => reader.get(ONE, { pk: { S: `k${i}` } })))
    expect(items.map((x) => Number(x?.n?.N))).toEqual(Array.from({ length: 150 }, (_, i) => i))
    expect(calls).toEqual(['BatchGetItemCommand', 'BatchGetItemCommand'])
  })

  it('retries unprocessed keys, and fails every read of a call that fails', async () => {
    let first = true
    const flaky = {
      send: (async (cmd: BatchGetItemCommand | GetItemCommand) => {
        const out = await ddb.send(cmd as BatchGetItemCommand)
        if (!(cmd instanceof BatchGetItemCommand) || !first) return out
        first = false
        // DynamoDB may return some keys unread: here, all of table ONE's
        const unread = cmd.input.RequestItems![ONE]!
        return { ...out, Responses: { [TWO]: out.Responses?.[TWO] ?? [] }, UnprocessedKeys: { [ONE]: unread } }
      }) as DynamoDBClient['send'],
    }
    const sleeps: number[] = []
    const reader = new ItemReader(flaky, { sleep: async (ms) => void sleeps.push(ms) })
    const [a, k3] = await Promise.all([reader.get(TWO, { pk: { S: 'org' }, sk: { S: 'a' } }), reader.get(ONE, { pk: { S: 'k3' } })])
    expect(a?.v?.S).toBe('A')
    expect(k3?.n?.N).toBe('3')
    expect(sleeps).toEqual([25])

    const broken = new ItemReader({ send: (async () => { throw new Error('unavailable') }) as DynamoDBClient['send'] })
    const outcomes = await Promise.allSettled([broken.get(ONE, { pk: { S: 'k1' } }), broken.get(ONE, { pk: { S: 'k2' } })])
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected'])

    const stuck = new ItemReader(
      { send: (async (cmd: BatchGetItemCommand) => ({ Responses: {}, UnprocessedKeys: cmd.input.RequestItems })) as unknown as DynamoDBClient['send'] },
      { maxAttempts: 3, sleep: async () => {} },
    )
    await expect(Promise.all([stuck.get(ONE, { pk: { S: 'k1' } }), stuck.get(ONE, { pk: { S: 'k2' } })])).rejects.toThrow('DynamoDB left 2 key(s) unread after 3 BatchGetItem attempts')
  })
})
