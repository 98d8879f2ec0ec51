/**
 * Acknowledgements of cdk-nag's AwsSolutions findings that Floe accepts, each
 * with its reason (CDK's `Validations.of(…).acknowledge`, which cdk-nag 3
 * reads). The stack test runs the pack and fails on anything else.
 */
import { Stack, Validations } from 'aws-cdk-lib'
import { CfnPolicy } from 'aws-cdk-lib/aws-iam'
import type { IConstruct } from 'constructs'

/** Acknowledges one finding (`AwsSolutions-S1`, or `AwsSolutions-IAM5[Action::s3:List*]`) on a construct and its children. */
export function acknowledge(scope: IConstruct, id: string, reason: string): void {
  Validations.of(scope).acknowledge({ id, reason })
}

/**
 * The wildcard actions of CDK's grant methods on buckets (`grantRead`,
 * `grantWrite`, `grantReadWrite`): each is a family of object or bucket
 * operations on the granted bucket only.
 */
const GRANT_ACTIONS = new Set(['s3:GetObject*', 's3:GetBucket*', 's3:List*', 's3:DeleteObject*', 's3:Abort*'])

/**
 * Acknowledges the wildcards CDK's grants put in `scope`'s IAM policies, and
 * only those: the grant actions above, the objects of a granted bucket
 * (`<bucket ARN>/*`) and the indexes of a granted table (`<table ARN>/index/*`).
 * It runs when the tree is validated, after cross-stack references are
 * resolved, so the finding ids name the resources as cdk-nag sees them; any
 * other wildcard is still reported.
 */
export function acknowledgeGrantWildcards(scope: IConstruct): void {
  scope.node.addValidation({
    validate: () => {
      for (const child of scope.node.findAll()) {
        if (!(child instanceof CfnPolicy)) continue
        const doc = Stack.of(child).resolve(child.policyDocument) as { Statement?: { Effect: string; Action: string | string[]; Resource: unknown }[] }
        for (const st of doc.Statement ?? []) {
          if (st.Effect !== 'Allow') continue
          const actions = ([] as string[]).concat(st.Action)
          for (const a of actions.filter((x) => GRANT_ACTIONS.has(x))) {
            acknowledge(child, `AwsSolutions-IAM5[Action::${a}]`, 'A CDK grant on a declared bucket: this action family applies to that bucket and its objects only')
          }
          const s3 = actions.every((x) => x.startsWith('s3:'))
          const dynamodb = actions.every((x) => x.startsWith('dynamodb:'))
          for (const r of ([] as unknown[]).concat(st.Resource).map(flattenReference)) {
            if (s3 && r.endsWith('/*') && !r.slice(0, -2).includes('*')) acknowledge(child, `AwsSolutions-IAM5[Resource::${r}]`, 'The objects of a declared bucket the function is granted')
            if (dynamodb && r.endsWith('/index/*') && !r.slice(0, -8).includes('*')) acknowledge(child, `AwsSolutions-IAM5[Resource::${r}]`, 'The indexes of a declared table the function is granted')
          }
        }
      }
      return []
    },
  })
}

/** A CloudFormation reference as one string, in the form cdk-nag names findings with. */
function flattenReference(node: unknown): string {
  if (node === undefined) return ''
  if (typeof node === 'string') return node.replace(/\$\{/g, '<').replace(/\}/g, '>')
  const o = node as Record<string, unknown>
  if (o['Fn::Join']) {
    const [delimiter, items] = o['Fn::Join'] as [string, unknown[]]
    return items.map(flattenReference).join(delimiter)
  }
  if (o['Fn::Sub']) return flattenReference(o['Fn::Sub'])
  if (o['Fn::GetAtt']) {
    const [resource, attribute] = o['Fn::GetAtt'] as [unknown, unknown]
    return `<${flattenReference(resource)}.${flattenReference(attribute)}>`
  }
  if (o['Fn::ImportValue']) return flattenReference(o['Fn::ImportValue'])
  if (o.Ref) return `<${flattenReference(o.Ref)}>`
  return JSON.stringify(node)
}
