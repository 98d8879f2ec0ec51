/** `multipart/form-data` bodies (file uploads from forms), read with busboy within limits. */
import busboy from 'busboy'

export interface UploadedFile {
  readonly field: string
  readonly filename: string
  readonly data: Buffer
}

export type Multipart =
  | { readonly ok: true; readonly fields: Readonly<Record<string, string>>; readonly files: readonly UploadedFile[] }
  | { readonly ok: false; readonly status: 400 | 413; readonly message: string }

export interface MultipartLimits {
  readonly fileBytes: number
  readonly files: number
  readonly fields: number
}

export function isMultipart(contentType: string | undefined): boolean {
  return /^multipart\/form-data\s*;/i.test(contentType ?? '')
}

export function parseMultipart(body: Buffer, contentType: string, limits: MultipartLimits): Promise<Multipart> {
  return new Promise((resolve) => {
    let bb: busboy.Busboy
    try {
      bb = busboy({ headers: { 'content-type': contentType }, limits: { fileSize: limits.fileBytes, files: limits.files, fields: limits.fields, fieldSize: 64 * 1024, parts: limits.files + limits.fields } })
    } catch (err) {
      resolve({ ok: false, status: 400, message: `the multipart body cannot be read: ${(err as Error).message}` })
      return
    }
    const fields: Record<string, string> = {}
    const files: UploadedFile[] = []
    let problem: Multipart | undefined
    bb.on('field', (name, value) => {
      fields[name] = value
    })
    bb.on('file', (field, stream, info) => {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('limit', () => {
        problem ??= { ok: false, status: 413, message: `the file ${info.filename} is larger than ${limits.fileBytes} bytes` }
      })
      stream.on('end', () => files.push({ field, filename: info.filename ?? '', data: Buffer.concat(chunks) }))
    })
    bb.on('filesLimit', () => {
      problem ??= { ok: false, status: 400, message: `at most ${limits.files} file${limits.files === 1 ? '' : 's'} may be uploaded at once` }
    })
    bb.on('partsLimit', () => {
      problem ??= { ok: false, status: 400, message: 'the form has too many parts' }
    })
    bb.on('error', (err: Error) => resolve({ ok: false, status: 400, message: `the multipart body cannot be read: ${err.message}` }))
    bb.on('close', () => resolve(problem ?? { ok: true, fields, files }))
    bb.end(body)
  })
}
