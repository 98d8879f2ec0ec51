import { describe, expect, it } from 'vitest'
import type { FunctionInventory } from '../../../lib/core/rehearse/inventory'
import { endpointVariable, functionEnvironment } from '../../../lib/local/rehearse/functions'

const fn: FunctionInventory = {
  stack: 'S', logicalId: 'HealthFunction', name: 'S-HealthFunction-X', arn: 'arn:aws:lambda:us-east-1:000000000000:function:S-HealthFunction-X',
  handler: 'index.handler', runtime: 'nodejs22.x', memoryMb: 128, timeoutSeconds: 3, assetPath: 'asset.1',
  environment: { FLOE_SCHEMAS_DIR: '/var/task/schemas', FLOE_TABLE_SETTINGS: 'S-Settings-Y', AWS_REGION: 'eu-west-9', OTHER: '/var/taskforce' },
  triggers: [], routes: [], problems: [],
}

describe('a hosted function\'s environment', () => {
  const env = functionEnvironment(fn, '/tmp/assembly/asset.1', { endpoints: { dynamodb: 'http://127.0.0.1:1', 'rds-data': 'http://127.0.0.1:2' }, credentials: { accessKeyId: 'AKID', secretAccessKey: 's', sessionToken: 't' } })

  it('has the template\'s variables, a path under Lambda\'s task root pointing into the bundle', () => {
    expect(env.FLOE_TABLE_SETTINGS).toBe('S-Settings-Y')
    expect(env.FLOE_SCHEMAS_DIR).toBe('/tmp/assembly/asset.1/schemas')
    expect(env.OTHER).toBe('/var/taskforce')
  })

  it('has what Lambda sets, which the template cannot override, and the function\'s own credentials', () => {
    expect(env).toMatchObject({
      _HANDLER: 'index.handler', AWS_REGION: 'us-east-1', AWS_LAMBDA_FUNCTION_NAME: 'S-HealthFunction-X', AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '128',
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST', LAMBDA_TASK_ROOT: '/tmp/assembly/asset.1', AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
      AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 's', AWS_SESSION_TOKEN: 't',
    })
  })

  it('points the SDK at the local endpoints and lets nothing of the host in but PATH', () => {
    expect(env.AWS_ENDPOINT_URL_DYNAMODB).toBe('http://127.0.0.1:1')
    expect(env.AWS_ENDPOINT_URL_RDS_DATA).toBe('http://127.0.0.1:2')
    expect(endpointVariable('s3')).toBe('AWS_ENDPOINT_URL_S3')
    expect(env.HOME).toBeUndefined()
    expect(env.AWS_PROFILE).toBeUndefined()
    expect(env.FLOE_LOCAL_ENDPOINTS).toBeUndefined()
  })
})

describe('what the function host counts as an error besides a thrown one', () => {
  it('a 5xx HTTP answer and a batch answer naming records it could not process; not a 4xx, nor an empty batchItemFailures', async () => {
    const { failedResult } = await import('../../../lib/local/rehearse/functions')
    expect(failedResult({ statusCode: 503 })).toBe(true)
    expect(failedResult({ batchItemFailures: [{ itemIdentifier: '1' }] })).toBe(true)
    expect(failedResult({ statusCode: 404 })).toBe(false)
    expect(failedResult({ batchItemFailures: [] })).toBe(false)
    expect(failedResult(null)).toBe(false)
  })
})
