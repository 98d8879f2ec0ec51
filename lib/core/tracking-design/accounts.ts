/** Organizations and their API keys: creation, revocation and seeding from configuration. */
import { randomUUID } from 'node:crypto'
import { hashSecret, isUuid, newApiKey } from './auth'
import type { AccountStore } from './ports'
import type { Organization } from './types'

export type Outcome<T> = { ok: true; value: T } | { ok: false; message: string }

export async function createOrganization(store: AccountStore, name: string, now: Date, id: string = randomUUID()): Promise<Outcome<Organization>> {
  if (name.trim() === '') return { ok: false, message: 'the organization name must not be empty' }
  if (!isUuid(id)) return { ok: false, message: `the organization id must be a UUID, got '${id}'` }
  const org = { id: id.toLowerCase(), name: name.trim(), createdAt: now.toISOString() }
  await store.putOrg(org)
  return { ok: true, value: org }
}

/** A new key for an existing organization; the secret is returned once and only its hash is stored. */
export async function createApiKey(store: AccountStore, orgId: string, now: Date): Promise<Outcome<{ keyId: string; secret: string }>> {
  if (!isUuid(orgId)) return { ok: false, message: `the organization id must be a UUID, got '${orgId}'` }
  if (!(await store.getOrg(orgId.toLowerCase()))) return { ok: false, message: `organization ${orgId} does not exist` }
  const { key, secret } = newApiKey(orgId.toLowerCase(), now)
  await store.putKey(key)
  return { ok: true, value: { keyId: key.keyId, secret } }
}

export async function revokeApiKey(store: AccountStore, keyId: string): Promise<Outcome<void>> {
  if (!isUuid(keyId)) return { ok: false, message: `the key id must be a UUID, got '${keyId}'` }
  if (!(await store.deleteKey(keyId.toLowerCase()))) return { ok: false, message: `API key ${keyId} does not exist` }
  return { ok: true, value: undefined }
}

/** `FLOE_ORG_ID`, `FLOE_API_KEY_ID` and `FLOE_API_KEY`: one organization and key known in advance (CI). */
export interface SeedConfig {
  readonly orgId: string
  readonly keyId: string
  readonly secret: string
}

export function seedConfig(env: Readonly<Record<string, string | undefined>>): Outcome<SeedConfig | undefined> {
  const orgId = env.FLOE_ORG_ID?.trim()
  const keyId = env.FLOE_API_KEY_ID?.trim()
  const secret = env.FLOE_API_KEY?.trim()
  if (!orgId && !keyId && !secret) return { ok: true, value: undefined }
  if (!orgId || !keyId || !secret) return { ok: false, message: 'FLOE_ORG_ID, FLOE_API_KEY_ID and FLOE_API_KEY must be set together' }
  if (!isUuid(orgId)) return { ok: false, message: `FLOE_ORG_ID must be a UUID, got '${orgId}'` }
  if (!isUuid(keyId)) return { ok: false, message: `FLOE_API_KEY_ID must be a UUID, got '${keyId}'` }
  return { ok: true, value: { orgId: orgId.toLowerCase(), keyId: keyId.toLowerCase(), secret } }
}

/** Makes sure the configured organization and key exist (idempotent; a changed secret replaces the key). */
export async function seed(store: AccountStore, cfg: SeedConfig, now: Date): Promise<'created' | 'unchanged'> {
  let changed = false
  if (!(await store.getOrg(cfg.orgId))) {
    await store.putOrg({ id: cfg.orgId, name: 'default', createdAt: now.toISOString() })
    changed = true
  }
  const existing = await store.getKeyById(cfg.keyId)
  const hash = hashSecret(cfg.secret)
  if (!existing || existing.hash !== hash || existing.orgId !== cfg.orgId) {
    if (existing) await store.deleteKey(cfg.keyId)
    await store.putKey({ keyId: cfg.keyId, orgId: cfg.orgId, hash, createdAt: now.toISOString() })
    changed = true
  }
  return changed ? 'created' : 'unchanged'
}
