declare module '@pushcorn/hocon-parser' {
  interface ParseOptions {
    readonly text?: string
    readonly url?: string
    readonly strict?: boolean
  }
  function parse(opts: ParseOptions): Promise<unknown>
  export default parse
}
