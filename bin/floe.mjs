#!/usr/bin/env node
// Entry point of the `floe` command: loads the TypeScript CLI through tsx.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'
import { register } from 'tsx/esm/api'
register()
await import('./floe.ts')
