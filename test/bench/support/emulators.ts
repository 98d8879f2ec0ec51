/**
 * The emulators in a process of their own, for benchmarks that should not
 * share an event loop with them (as AWS services are elsewhere too). Prints
 * one JSON line with the endpoints, and stops on SIGTERM.
 */
import { startEmulators } from '../../../lib/local/emulators'

const emulators = await startEmulators()
process.stdout.write(`${JSON.stringify(emulators.endpoints)}\n`)
process.once('SIGTERM', () => {
  void emulators.stop().then(() => process.exit(0))
})
