/**
 * The RDS Data API (REST-JSON, signing name `rds-data`): `POST /Execute`,
 * `/BatchExecute`, `/BeginTransaction`, `/CommitTransaction`,
 * `/RollbackTransaction`. AWS checks the operation on the cluster
 * (`resourceArn`) and, for the operations that carry one, reading the
 * credentials secret (`secretsmanager:GetSecretValue` on `secretArn`) as the
 * caller.
 */
import { check, classified, jsonBody, str, unclassified, type Check, type Classification, type ServiceRequest } from './common'

const SERVICE = 'rds-data'

const PATHS: Readonly<Record<string, string>> = {
  '/Execute': 'ExecuteStatement',
  '/BatchExecute': 'BatchExecuteStatement',
  '/BeginTransaction': 'BeginTransaction',
  '/CommitTransaction': 'CommitTransaction',
  '/RollbackTransaction': 'RollbackTransaction',
  '/ExecuteSql': 'ExecuteSql',
}

/** The operations classified here. */
export const RDS_DATA_OPERATIONS: readonly string[] = Object.values(PATHS)

export function classifyRdsData(r: ServiceRequest): Classification {
  const op = PATHS[r.request.path]
  if (!op || r.request.method.toUpperCase() !== 'POST') return unclassified(SERVICE, `${r.request.method} ${r.request.path} is not a Data API operation`)
  const body = jsonBody(r)
  const cluster = str(body['resourceArn']) ?? str(body['dbClusterOrInstanceArn'])
  if (!cluster) return unclassified(SERVICE, `${op} without resourceArn`, op)
  const checks: Check[] = [check(r, `rds-data:${op}`, cluster)]
  const secret = str(body['secretArn']) ?? str(body['awsSecretStoreArn'])
  if (secret) checks.push(check(r, 'secretsmanager:GetSecretValue', secret))
  return classified(SERVICE, op, checks)
}
