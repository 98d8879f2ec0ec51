/**
 * A collector payload, `iglu:com.snowplowanalytics.snowplow/CollectorPayload/thrift/1-0-0`:
 * one HTTP request as the collector received it. Field ids on the wire are in
 * `FIELD_IDS`. Optional fields are `undefined` when absent.
 */
export interface CollectorPayload {
  schema: string
  ipAddress: string
  /** Collector time, epoch milliseconds. */
  timestamp: number
  encoding: string
  collector: string
  userAgent?: string
  refererUri?: string
  path?: string
  /** Raw (still percent-encoded) query string without the leading `?`. */
  querystring?: string
  body?: string
  /** Each element `Name: value`. */
  headers?: string[]
  contentType?: string
  hostname?: string
  networkUserId?: string
}

export const COLLECTOR_PAYLOAD_SCHEMA = 'iglu:com.snowplowanalytics.snowplow/CollectorPayload/thrift/1-0-0'

/** Thrift field ids of CollectorPayload, as collectors write and enrich reads them. */
export const FIELD_IDS = {
  schema: 31337,
  ipAddress: 100,
  timestamp: 200,
  encoding: 210,
  collector: 220,
  userAgent: 300,
  refererUri: 310,
  path: 320,
  querystring: 330,
  body: 340,
  headers: 350,
  contentType: 360,
  hostname: 400,
  networkUserId: 410,
} as const
