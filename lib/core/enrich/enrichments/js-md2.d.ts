declare module 'js-md2' {
  /** The MD2 digest of a string's UTF-8 bytes, as lower-case hex. */
  const md2: (message: string) => string
  export default md2
}
