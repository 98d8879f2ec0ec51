// A function's worker thread: loads its TypeScript through tsx (as bin/floe.mjs does).
import { register } from 'tsx/esm/api'
register()
await import('./function-worker-thread.ts')
