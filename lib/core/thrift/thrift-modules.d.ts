// Types for the three `thrift` package modules the codec loads directly (the
// package index also loads HTTP, WebSocket and XHR connections it does not need).
declare module 'thrift/lib/nodejs/lib/thrift/binary_protocol.js' {
  import type { TBinaryProtocol } from 'thrift'
  const protocol: typeof TBinaryProtocol
  export default protocol
}
declare module 'thrift/lib/nodejs/lib/thrift/buffered_transport.js' {
  import type { TBufferedTransport } from 'thrift'
  const transport: typeof TBufferedTransport
  export default transport
}
declare module 'thrift/lib/nodejs/lib/thrift/thrift.js' {
  import type { Thrift } from 'thrift'
  const thrift: { Type: typeof Thrift.Type }
  export default thrift
}
