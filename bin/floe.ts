import { run } from '../lib/cli/index'

process.exitCode = await run(process.argv.slice(2))
