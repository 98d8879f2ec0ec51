import { describe, expect, it } from 'vitest'
import { escapeHelp, escapeLabelValue, formatValue, PROMETHEUS_CONTENT_TYPE, renderPrometheus, toPrometheus, type MetricFamily } from '../../../lib/core/metrics/prometheus'
import { shapeLocal, type InvocationCounters, type ProcessFigures } from '../../../lib/core/metrics/report'
import { parseExposition } from './exposition'

describe('the text exposition format', () => {
  it('escapes label values (backslash, double quote, line feed) and HELP text (backslash, line feed)', () => {
    expect(escapeLabelValue('a\\b"c\nd')).toBe('a\\\\b\\"c\\nd')
    expect(escapeHelp('x\\y\nz "q"')).toBe('x\\\\y\\nz "q"')
    expect(formatValue(NaN)).toBe('NaN')
    expect(formatValue(Infinity)).toBe('+Inf')
    expect(formatValue(-Infinity)).toBe('-Inf')
    expect(formatValue(0.25)).toBe('0.25')
  })

  it('writes HELP and TYPE once per family, before its samples, and reads back to the same values', () => {
    const tricky = 'we"ird\\name\nnext line'
    const families: MetricFamily[] = [
      { name: 'floe_test_total', help: 'A counter\nwith two lines and a \\ backslash', type: 'counter', samples: [{ labels: { function: tricky, service: 's' }, value: 3 }, { labels: { function: 'plain', service: 's' }, value: 0 }] },
      { name: 'floe_test_seconds', help: 'A summary', type: 'summary', samples: [{ labels: { quantile: '0.95' }, value: 0.5 }, { suffix: '_sum', labels: {}, value: 12.5 }, { suffix: '_count', labels: {}, value: 40 }] },
      { name: 'floe_empty', help: 'no samples: left out', type: 'gauge', samples: [] },
    ]
    const text = renderPrometheus(families)
    expect(text).toContain('# TYPE floe_test_total counter\n')
    expect(text).toContain('floe_test_total{function="we\\"ird\\\\name\\nnext line",service="s"} 3\n')
    expect(text).not.toContain('floe_empty')
    const parsed = parseExposition(text)
    expect(parsed.order).toEqual(['floe_test_total', 'floe_test_seconds'])
    expect(parsed.help.get('floe_test_total')).toBe('A counter\nwith two lines and a \\ backslash')
    expect(parsed.samples[0]).toEqual({ name: 'floe_test_total', labels: { function: tricky, service: 's' }, value: 3 })
    expect(parsed.samples.find((s) => s.name === 'floe_test_seconds_count')!.value).toBe(40)
  })

  it('refuses invalid metric and label names, and a family defined twice', () => {
    expect(() => renderPrometheus([{ name: '9bad', help: '', type: 'gauge', samples: [{ labels: {}, value: 1 }] }])).toThrow(/invalid metric name/)
    expect(() => renderPrometheus([{ name: 'ok', help: '', type: 'gauge', samples: [{ labels: { 'bad-label': 'x' }, value: 1 }] }])).toThrow(/invalid label name/)
    const f: MetricFamily = { name: 'twice', help: '', type: 'gauge', samples: [{ labels: {}, value: 1 }] }
    expect(() => renderPrometheus([f, f])).toThrow(/defined twice/)
  })

  it('serves version 0.0.4 as text/plain', () => {
    expect(PROMETHEUS_CONTENT_TYPE).toBe('text/plain; version=0.0.4; charset=utf-8')
  })
})

describe('a local report in the text format', () => {
  const proc: ProcessFigures = { pid: 42, command: 'floe (node)', uptimeSeconds: 10, cpu: { userSeconds: 1.5, systemSeconds: 0.25 }, memory: { rssBytes: 1000, peakRssBytes: 2000, heapUsedBytes: 300, heapTotalBytes: 400, externalBytes: 5 }, io: { readBytes: 7, writtenBytes: 8 }, threads: 11 }
  const counters = (fn: string, service: string, n: number): InvocationCounters => ({
    function: fn,
    service,
    invocations: n,
    errors: 1,
    durationSumMs: n * 10,
    durationMaxMs: 30,
    recentDurationsMs: Array.from({ length: n }, (_, i) => i + 1),
    cpuUserMicros: 2000,
    cpuSystemMicros: 1000,
    network: { requests: n, requestBytes: 100, responseBytes: 200, responses: { '2xx': n - 1, '5xx': 1 } },
    streams: fn === 'searchLoader' ? { bad: { records: 4, bytes: 400, batches: 2 } } : {},
  })
  const report = shapeLocal({
    now: new Date('2025-01-02T03:04:05Z'),
    since: new Date('2025-01-02T03:00:00Z'),
    functions: ['collector', 'searchLoader', 'health'],
    serviceOrder: ['collector', 'esLoaderGood', 'esLoaderBad'],
    counters: [counters('collector', 'collector', 5), counters('searchLoader', 'esLoaderBad', 2)],
    recentLimit: 1000,
    process: proc,
    emulators: { dynamodb: { kind: 'emulator', runsIn: 'child', process: { ...proc, pid: 43, command: 'DynamoDB Local (java)', memory: { rssBytes: 9000, peakRssBytes: null } } }, kinesis: { kind: 'emulator', runsIn: 'floe', process: null } },
  })

  it('has counters per function and service, a summary of durations, and process figures per process', () => {
    const parsed = parseExposition(toPrometheus(report))
    const value = (name: string, labels: Record<string, string>) => parsed.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value
    expect(parsed.types.get('floe_function_invocations_total')).toBe('counter')
    expect(parsed.types.get('floe_function_duration_seconds')).toBe('summary')
    expect(parsed.types.get('floe_process_resident_memory_bytes')).toBe('gauge')
    expect(value('floe_function_invocations_total', { function: 'collector', service: 'collector' })).toBe(5)
    expect(value('floe_function_invocations_total', { function: 'searchLoader', service: 'esLoaderBad' })).toBe(2)
    expect(value('floe_function_invocations_total', { function: 'searchLoader', service: 'esLoaderGood' })).toBe(0)
    expect(value('floe_function_invocations_total', { function: 'health', service: 'health' })).toBe(0)
    expect(value('floe_function_duration_seconds', { function: 'collector', quantile: '0.95' })).toBe(0.005)
    expect(value('floe_function_duration_seconds_sum', { function: 'collector' })).toBe(0.05)
    expect(value('floe_function_duration_seconds_count', { function: 'collector' })).toBe(5)
    expect(value('floe_function_cpu_seconds_total', { function: 'collector', mode: 'user' })).toBe(0.002)
    expect(value('floe_function_http_responses_total', { function: 'collector', code: '5xx' })).toBe(1)
    expect(value('floe_function_stream_records_read_total', { function: 'searchLoader', stream: 'bad' })).toBe(4)
    expect(value('floe_process_resident_memory_bytes', { process: 'floe', pid: '42' })).toBe(1000)
    expect(value('floe_process_resident_memory_bytes', { process: 'dynamodb', pid: '43' })).toBe(9000)
    expect(value('floe_service_info', { service: 'kinesis', runs_in: 'floe' })).toBe(1)
    expect(value('floe_metrics_generated_timestamp_seconds', { source: 'local' })).toBe(Date.parse('2025-01-02T03:04:05Z') / 1000)
  })
})
