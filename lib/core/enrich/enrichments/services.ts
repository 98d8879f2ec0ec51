/**
 * What the shell hands the enrichments that reach outside the event: HTTP
 * (GET for the web-service enrichments, any method for the lookups), SQL
 * databases, the clock, and this deployment's event specifications. Only
 * interfaces: the implementations live in the shells.
 */

export interface HttpRequest {
  readonly method: 'GET' | 'POST' | 'PUT'
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body?: string
  /** The whole exchange (waiting for a connection included) must finish within this. */
  readonly timeoutMs: number
  /** Answers longer than this many bytes are refused (default: the client's bound). */
  readonly maxBytes?: number
}

/** A response with any status, or why there is none (connection refused, timeout, answer too large). */
export type HttpAnswer = { readonly ok: true; readonly status: number; readonly body: string } | { readonly ok: false; readonly error: string; readonly timedOut?: true }

export interface HttpClient {
  request(r: HttpRequest): Promise<HttpAnswer>
}

export interface SqlDatabaseConfig {
  readonly engine: 'postgresql' | 'mysql'
  readonly host: string
  readonly port: number
  readonly sslMode: boolean
  readonly username: string
  readonly password: string
  readonly database: string
}

/**
 * A statement's answer: column names in order and the rows' cells in the same
 * order. A cell is null, a boolean, a number, a string, or `{text}` for types
 * with no JSON counterpart (exact numbers, JSON documents, timestamps, …),
 * written as JSON when the text reads as JSON, else as a string.
 */
export interface SqlRows {
  readonly columns: readonly string[]
  readonly rows: readonly (readonly unknown[])[]
}

/** A pool of connections to one database; `?` placeholders are bound to `params` by position. */
export interface SqlDatabase {
  query(sql: string, params: readonly SqlValue[], timeoutMs: number): Promise<SqlRows>
}

export type SqlValue = string | number | boolean

export interface LookupServices {
  readonly http?: HttpClient
  /** The pool for a database (the same pool for the same settings). */
  readonly sql?: (db: SqlDatabaseConfig) => SqlDatabase
  /** Milliseconds since the epoch, for cache lifetimes. */
  readonly now: () => number
}

export interface HttpGetOptions {
  /** The whole exchange (connecting, sending, reading the answer) must end within this many milliseconds. */
  readonly timeoutMs: number
  /** Answers longer than this are refused (default 1 MiB). */
  readonly maxBytes?: number
}

/** An answer (any status), or why there is none (a network error, a timeout, an answer too long). */
export type HttpGetResult = HttpAnswer

export interface HttpGet {
  /** Never rejects: failures are results. */
  get(url: string, o: HttpGetOptions): Promise<HttpGetResult>
}

/** What such an enrichment is built with besides its configuration. */
export interface WebServices {
  readonly http: HttpGet
  /** The current time in epoch milliseconds (default `Date.now`). */
  readonly now?: () => number
}

/** One version of a specification, as the tracking-design API stored it. */
export interface SpecRecord {
  readonly id: string
  readonly version: number
  /** `draft`, `published` or `deprecated`. */
  readonly status: string
  /** The specification as written (`name`, `event: {source, schema?}`, `entities: {tracked: [{source, minCardinality?, maxCardinality?, schema?}]}`, …). */
  readonly snapshot: Record<string, unknown>
}

/** Where the specifications come from: every remaining version of every specification. */
export interface EventSpecSource {
  load(): Promise<readonly SpecRecord[]>
}

/** What the module needs from the shell. */
export interface EventSpecContext {
  readonly source: EventSpecSource
  /** Milliseconds since the epoch (refresh scheduling). */
  now(): number
  /** Told when a refresh fails (the current set is kept). */
  warn?(message: string): void
  /** Given the enrichment, whose `reload` reads the specifications again now, for a shell that knows when they changed (it may hold it weakly). */
  follow?(follower: { reload(): Promise<void> }): void
}
