/**
 * What enrichments that read a web service (currency conversion, weather)
 * need from the network: a GET with a deadline and a bounded answer. The core
 * only sees this interface; the shell hands in the implementation (Node's
 * HTTP client with a bounded keep-alive pool, the one the lookup enrichments
 * use: `lib/aws/http-get.ts`), tests a
 * client of their own or the same one against local servers.
 */

import type { HttpGetOptions, HttpGetResult, HttpGet, WebServices } from './services'
export type { HttpGetOptions, HttpGetResult, HttpGet, WebServices } from './services'

/** Checks an http(s) base URL parameter; the message names the parameter. */
export function checkBaseUrl(name: string, v: unknown): string | undefined {
  if (typeof v !== 'string') return `${name} must be a string (an http:// or https:// URL)`
  if (v.length > 2048) return `${name} is longer than 2048 characters`
  let u: URL
  try {
    u = new URL(v)
  } catch {
    return `${name} is not a URL: ${JSON.stringify(v)}`
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `${name} must be an http:// or https:// URL, not ${u.protocol}//`
  if (u.search !== '' || u.hash !== '') return `${name} must not have a query or a fragment: ${JSON.stringify(v)}`
  if (u.username !== '' || u.password !== '') return `${name} must not carry credentials`
  return undefined
}

/** A base URL without its trailing slashes, to append a path to. */
export const baseUrl = (v: string): string => v.replace(/\/+$/, '')
