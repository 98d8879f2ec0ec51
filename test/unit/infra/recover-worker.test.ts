/**
 * The recovery worker on AWS: its queue (FIFO, with a dead-letter queue,
 * TLS only), the function it triggers one message at a time, and the grants
 * of the control plane (send) and of the worker (receive, send, the streams,
 * the archive and the search store) — and cdk-nag stays clean.
 */
import { Match } from 'aws-cdk-lib/assertions'
import { describe, expect, it } from 'vitest'
import { queueTriggers, functions } from '../../../lib/infra/functions'
import { envVar, queues } from '../../../lib/infra/resources'
import { nagViolations, synthTemplates } from '../../support/synth'

const { app } = synthTemplates()

const fnId = (prefix: string) => Object.entries(app.findResources('AWS::Lambda::Function')).find(([id]) => id.startsWith(`${prefix}Function`))![0]
const queueId = (prefix: string) => Object.keys(app.findResources('AWS::SQS::Queue')).find((id) => id.startsWith(prefix))!
function policyOf(fn: string): string {
  const role = app.findResources('AWS::Lambda::Function')[fn]!.Properties.Role['Fn::GetAtt'][0]
  return JSON.stringify(Object.values(app.findResources('AWS::IAM::Policy')).filter((p) => JSON.stringify(p.Properties.Roles).includes(role)).map((p) => p.Properties.PolicyDocument.Statement))
}

describe('the recovery worker', () => {
  it('has a FIFO queue with a dead-letter queue, a visibility timeout of six times its timeout, and TLS only', () => {
    const q = queueId('RecoverRunsQueue')
    const dlq = queueId('RecoverRunsDeadLetterQueue')
    expect(q).toBeDefined()
    expect(dlq).toBeDefined()
    app.hasResourceProperties('AWS::SQS::Queue', {
      FifoQueue: true,
      VisibilityTimeout: queues.recoverRuns.visibilityTimeoutSeconds,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [dlq, 'Arn'] }, maxReceiveCount: queues.recoverRuns.maxReceiveCount },
    })
    expect(queues.recoverRuns.visibilityTimeoutSeconds).toBeGreaterThanOrEqual(6 * functions.recoverWorker.timeoutSeconds)
    app.hasResourceProperties('AWS::SQS::QueuePolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
      Queues: [{ Ref: q }],
    })
  })

  it('is invoked by its queue one message at a time, reporting failed messages', () => {
    expect(queueTriggers).toContainEqual({ function: 'recoverWorker', queue: 'recoverRuns', batchSize: 1 })
    app.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: fnId('RecoverWorker') },
      EventSourceArn: { 'Fn::GetAtt': [queueId('RecoverRunsQueue'), 'Arn'] },
      BatchSize: 1,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    })
  })

  it('grants the control plane sending and the worker receiving and sending, with the queue URL in both environments', () => {
    const q = queueId('RecoverRunsQueue')
    const cp = policyOf(fnId('ControlPlane'))
    expect(cp).toContain('sqs:SendMessage')
    expect(cp).not.toContain('sqs:ReceiveMessage')
    const w = policyOf(fnId('RecoverWorker'))
    for (const a of ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:SendMessage', 'kinesis:PutRecords', 'rds-data:ExecuteStatement', 's3:GetObject*']) expect(w).toContain(a)
    for (const f of ['ControlPlane', 'RecoverWorker']) {
      const env = app.findResources('AWS::Lambda::Function')[fnId(f)]!.Properties.Environment.Variables
      expect(env[envVar('queue', 'recoverRuns')]).toEqual({ Ref: q })
    }
    expect(app.findResources('AWS::Lambda::Function')[fnId('RecoverWorker')]!.Properties.Timeout).toBe(900)
  })

  it('leaves the worker out with the search store, and keeps cdk-nag clean', () => {
    const without = synthTemplates({ searchStore: false }).app
    expect(Object.keys(without.findResources('AWS::Lambda::Function')).some((id) => id.startsWith('RecoverWorkerFunction'))).toBe(false)
    expect(nagViolations()).toBe('')
  })
})
