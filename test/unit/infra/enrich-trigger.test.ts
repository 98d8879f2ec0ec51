/** The enrich trigger follows enrich's configuration: starting position AT_TIMESTAMP, and FanOut as an enhanced fan-out consumer. */
import { App } from 'aws-cdk-lib'
import { Template } from 'aws-cdk-lib/assertions'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { enrichDeployment } from '../../../lib/core/enrich/deploy'
import { FloeAppStack, FloeDataStack } from '../../../lib/infra/stacks'
import { projectRoot } from '../../../lib/local/handlers'

const dir = mkdtempSync(join(tmpdir(), 'floe-enrich-trigger-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function config(name: string, input: string): string {
  const file = join(dir, `${name}.hocon`)
  writeFileSync(file, `{
  license { accept = true }
  input { streamName = "raw"\n${input} }
  output { good { streamName = "good" }, incomplete { streamName = "incomplete" }, bad { streamName = "bad" } }
}`)
  return file
}

/** The app template and the enrich mapping, synthesized with `FLOE_ENRICH_CONFIG` naming `file`. */
function synth(file: string) {
  const before = process.env.FLOE_ENRICH_CONFIG
  process.env.FLOE_ENRICH_CONFIG = file
  try {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } })
    const data = new FloeDataStack(app, 'D')
    const stack = new FloeAppStack(app, 'A', { data: data.data, projectRoot })
    const t = Template.fromStack(stack)
    const fnIds = Object.keys(t.findResources('AWS::Lambda::Function')).filter((id) => id.startsWith('Enrich'))
    const mapping = Object.values(t.findResources('AWS::Lambda::EventSourceMapping')).find((m) => fnIds.includes(m.Properties.FunctionName.Ref))!
    return { t, mapping }
  } finally {
    if (before === undefined) delete process.env.FLOE_ENRICH_CONFIG
    else process.env.FLOE_ENRICH_CONFIG = before
  }
}

describe('enrich stream trigger from the configuration', () => {
  it('input.initialPosition AT_TIMESTAMP starts the mapping at the timestamp', () => {
    const file = config('at', 'initialPosition { type = "AT_TIMESTAMP", timestamp = "2026-11-01T10:30:00Z" }')
    expect(enrichDeployment({ FLOE_ENRICH_CONFIG: file })).toMatchObject({ startingPosition: 'AT_TIMESTAMP', startingPositionTimestamp: 1793529000, enhancedFanOut: false })
    const { mapping } = synth(file)
    expect(mapping.Properties).toMatchObject({ StartingPosition: 'AT_TIMESTAMP', StartingPositionTimestamp: 1793529000 })
  })

  it('an AT_TIMESTAMP without a valid past timestamp is refused, naming the key', () => {
    expect(() => enrichDeployment({ FLOE_ENRICH_CONFIG: config('no-ts', 'initialPosition { type = "AT_TIMESTAMP" }') })).toThrow(/input\.initialPosition\.timestamp: required/)
    expect(() => enrichDeployment({ FLOE_ENRICH_CONFIG: config('bad-ts', 'initialPosition { type = "AT_TIMESTAMP", timestamp = "yesterday" }') })).toThrow(
      /input\.initialPosition\.timestamp: must be an ISO 8601 timestamp/,
    )
    const future = new Date(Date.now() + 86_400_000).toISOString()
    expect(() => enrichDeployment({ FLOE_ENRICH_CONFIG: config('future-ts', `initialPosition { type = "AT_TIMESTAMP", timestamp = "${future}" }`) })).toThrow(
      `input.initialPosition.timestamp ${future} is in the future; a stream trigger can start only at a time already past`,
    )
  })

  it('input.retrievalMode FanOut reads through an enhanced fan-out consumer of its own, with permission to subscribe', () => {
    const { t, mapping } = synth(config('fanout', 'retrievalMode { type = "FanOut", maxRecords = 500 }'))
    const consumers = t.findResources('AWS::Kinesis::StreamConsumer')
    const [consumerId, consumer] = Object.entries(consumers).find(([id]) => id.startsWith('EnrichRawConsumer'))!
    expect(consumer.Properties.ConsumerName).toBe('A-enrich-raw')
    expect(consumer.Properties.StreamARN).toMatchObject({ 'Fn::ImportValue': expect.stringMatching(/RawStream.*Arn/) })
    expect(mapping.Properties).toMatchObject({ EventSourceArn: { 'Fn::GetAtt': [consumerId, 'ConsumerARN'] }, BatchSize: 500 })
    expect(JSON.stringify(t.findResources('AWS::IAM::Policy'))).toContain('kinesis:SubscribeToShard')
    // the other triggers still poll
    expect(Object.keys(consumers)).toHaveLength(1)
  })

  it('Polling (the default) maps the stream itself', () => {
    const { t, mapping } = synth(config('polling', ''))
    expect(t.findResources('AWS::Kinesis::StreamConsumer')).toEqual({})
    expect(mapping.Properties.EventSourceArn).toMatchObject({ 'Fn::ImportValue': expect.stringMatching(/RawStream.*Arn/) })
    expect(mapping.Properties.StartingPosition).toBe('TRIM_HORIZON')
  })
})

describe('enrich outputs on AWS', () => {
  it('an output region the synthesis cannot check against the deployment region is refused, naming the key', () => {
    const file = join(dir, 'output-region.hocon')
    writeFileSync(file, `{ license { accept = true }, input { streamName = "raw" }, output { good { streamName = "good", region = "eu-central-1" }, incomplete { streamName = "incomplete" }, bad { streamName = "bad" } } }`)
    expect(() => synth(file)).toThrow(/output\.good\.region = "eu-central-1": the deployment's region is not known at synthesis/)
  })
})
