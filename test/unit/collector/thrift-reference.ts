import thrift from 'thrift'
import { FIELD_IDS } from '../../../lib/core/thrift/types'
import type { DecodedCollectorPayload } from '../../../lib/core/thrift/collector-payload'
import type { CollectorPayload } from '../../../lib/core/thrift/types'

const { TBinaryProtocol, TBufferedTransport, Thrift } = thrift
const T = Thrift.Type

/**
 * An independent CollectorPayload reader built on the `thrift` package's
 * TBinaryProtocol, the way generated code reads a struct. Used to cross-check
 * the hand-written decoder and to compare their speed.
 */
const names = Object.fromEntries(Object.entries(FIELD_IDS).map(([k, v]) => [v, k])) as Record<number, keyof DecodedCollectorPayload>

export function referenceDecode(bytes: Buffer): DecodedCollectorPayload {
  let proto: InstanceType<typeof TBinaryProtocol> | undefined
  const receive = TBufferedTransport.receiver((transport) => {
    proto = new TBinaryProtocol(transport)
  }, 0)
  receive(bytes)
  const p = proto!
  const out: DecodedCollectorPayload = {}
  p.readStructBegin()
  for (;;) {
    const f = p.readFieldBegin()
    if (f.ftype === T.STOP) break
    const name = names[f.fid]
    if (name === 'timestamp' && f.ftype === T.I64) out.timestamp = p.readI64().toNumber(true)
    else if (name === 'headers' && f.ftype === T.LIST) {
      const l = p.readListBegin()
      const hs: string[] = []
      for (let i = 0; i < l.size; i++) hs.push(p.readString())
      p.readListEnd()
      out.headers = hs
    } else if (name && name !== 'timestamp' && name !== 'headers' && f.ftype === T.STRING) {
      ;(out as Record<string, unknown>)[name] = p.readString()
    } else p.skip(f.ftype)
    p.readFieldEnd()
  }
  p.readStructEnd()
  return out
}

/**
 * An independent CollectorPayload writer built on the `thrift` package's
 * TBinaryProtocol, field by field in ascending id order as generated code
 * writes a struct. Used to cross-check the hand-written encoder.
 */
export function referenceEncode(p: CollectorPayload): Buffer {
  let out: Buffer | undefined
  const transport = new TBufferedTransport(undefined, (msg?: Buffer) => {
    out = msg
  })
  const proto = new TBinaryProtocol(transport)
  proto.writeStructBegin('CollectorPayload')
  const str = (name: string, id: number, value: string | undefined) => {
    if (value === undefined || value === null) return
    proto.writeFieldBegin(name, T.STRING, id)
    proto.writeString(value)
    proto.writeFieldEnd()
  }
  str('ipAddress', FIELD_IDS.ipAddress, p.ipAddress)
  if (p.timestamp !== undefined && p.timestamp !== null) {
    proto.writeFieldBegin('timestamp', T.I64, FIELD_IDS.timestamp)
    proto.writeI64(p.timestamp)
    proto.writeFieldEnd()
  }
  for (const k of ['encoding', 'collector', 'userAgent', 'refererUri', 'path', 'querystring', 'body'] as const) str(k, FIELD_IDS[k], p[k])
  if (p.headers !== undefined && p.headers !== null) {
    proto.writeFieldBegin('headers', T.LIST, FIELD_IDS.headers)
    proto.writeListBegin(T.STRING, p.headers.length)
    for (const h of p.headers) proto.writeString(h)
    proto.writeListEnd()
    proto.writeFieldEnd()
  }
  for (const k of ['contentType', 'hostname', 'networkUserId', 'schema'] as const) str(k, FIELD_IDS[k], p[k])
  proto.writeFieldStop()
  proto.writeStructEnd()
  proto.flush()
  return out ?? Buffer.alloc(0)
}
