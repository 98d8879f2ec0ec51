// Module resolution hooks of a hosted function: `@aws-sdk/*` (which bundles
// leave out, as Lambda's Node.js runtime provides it) is resolved from the
// directory given, every other specifier as usual.
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'

let parentURL
export function initialize(data) {
  parentURL = pathToFileURL(join(data.from, 'index.js')).href
}
export function resolve(specifier, context, next) {
  if (specifier.startsWith('@aws-sdk/')) return next(specifier, { ...context, parentURL })
  return next(specifier, context)
}
