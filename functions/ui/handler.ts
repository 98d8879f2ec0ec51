import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { httpLambda } from '../../lib/aws/lambda'
import { uiFromEnvironment } from '../../lib/ui/serve'

/** The pages `/home` and `/dashboard-ui`, built by `lib/ui/build.ts` into `ui/` next to this bundle. */
export const handler = httpLambda(uiFromEnvironment(join(dirname(fileURLToPath(import.meta.url)), 'ui')), { auth: 'basic' })
