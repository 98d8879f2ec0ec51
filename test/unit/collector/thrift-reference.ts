import thrift from 'thrift'
import { FIELD_IDS } from '../../../lib/core/thrift/types'
import type { DecodedCollectorPayload } from '../../../lib/core/thrift/collector-payload'

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
