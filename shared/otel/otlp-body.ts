import { promisify } from 'node:util'
import { gunzip, inflate } from 'node:zlib'
import type { Context } from 'hono'
import { config } from '#shared/config'
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '#shared/errors/http-error'
import type { AppEnv } from '#shared/http/app-env'
import { requestHeader } from '#shared/http/node-bindings'
import { decodeBody } from '#shared/http/request-body'
import { decodeJsonRequest } from '#shared/otel/otlp-json'
import type { OtelResourceSpans } from '#shared/otel/otlp-model'
import { decodeProtobufRequest } from '#shared/otel/otlp-protobuf'

/** The two OTLP/HTTP encodings; the response is written in the request's. */
export type OtlpEncoding = 'protobuf' | 'json'

/** A decoded OTLP/HTTP trace export. */
export type OtlpRequest = { encoding: OtlpEncoding; resourceSpans: OtelResourceSpans[] }

const gunzipAsync = promisify(gunzip)
const inflateAsync = promisify(inflate)

/** The encoding a `Content-Type` names; OTLP/HTTP answers any other (or none) with 415. */
export function encodingOf(contentType: string | undefined): OtlpEncoding {
  const type = contentType?.split(';', 1)[0]?.trim().toLowerCase()
  if (type === 'application/x-protobuf' || type === 'application/protobuf') return 'protobuf'
  if (type === 'application/json') return 'json'
  throw new UnsupportedMediaTypeError(
    `Unsupported Content-Type '${contentType ?? ''}': OTLP/HTTP takes application/x-protobuf or application/json`,
  )
}

function tooLarge(error: unknown): boolean {
  return error instanceof RangeError && (error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE'
}

/**
 * Undoes `Content-Encoding` (gzip or deflate), never producing more than the body limit: a small body that inflates
 * past it (a "zip bomb") stops there with a 413 instead of filling memory.
 */
async function decompress(body: Buffer, encoding: string | undefined): Promise<Buffer> {
  const coding = encoding?.trim().toLowerCase() ?? 'identity'
  if (coding === 'identity' || coding === '') return body
  const inflateWith =
    coding === 'gzip' || coding === 'x-gzip' ? gunzipAsync : coding === 'deflate' ? inflateAsync : undefined
  if (inflateWith === undefined) {
    throw new UnsupportedMediaTypeError(`Unsupported Content-Encoding '${encoding}': use gzip, deflate or none`)
  }
  try {
    return await inflateWith(body, { maxOutputLength: config.maxBodyBytes })
  } catch (error) {
    if (tooLarge(error)) {
      throw new PayloadTooLargeError(`Decompressed request body larger than ${config.maxBodyBytes} bytes`)
    }
    throw new BadRequestError(`Invalid ${coding} body: ${(error as Error).message}`, { cause: error })
  }
}

/** Reads, decompresses and decodes an OTLP/HTTP trace export: 415, 413 or 400 when it cannot. */
export async function readOtlpRequest(c: Context<AppEnv>): Promise<OtlpRequest> {
  const encoding = encodingOf(requestHeader(c, 'content-type'))
  const raw = Buffer.from(await c.req.arrayBuffer())
  const body = await decompress(raw, requestHeader(c, 'content-encoding'))
  return {
    encoding,
    resourceSpans: encoding === 'protobuf' ? decodeProtobufRequest(body) : decodeJsonRequest(decodeBody(body)),
  }
}
