#!/usr/bin/env node
// Entry point of the `floe` command: loads the TypeScript CLI through tsx.
import { register } from 'tsx/esm/api'
register()
await import('./floe.ts')
