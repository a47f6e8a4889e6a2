import * as z from 'zod/mini'
import { BadRequestError } from '#shared/errors/http-error'
import {
  PyAnySchema,
  PyBoolSchema,
  type PyField,
  PyIntSchema,
  type PyModelSpec,
  PyStrSchema,
  pyDict,
  pyEnum,
  pyList,
  pyModel,
  pyOptional,
} from '#shared/schemas/pydantic-model'

// Weave's built-in object classes (newest registry: `weave/shared/trace_server/interface/builtin_object_classes/`),
// as pydantic-style zod models; docs/tracing.md §8.2 and "Objects" list which ones Loom validates.

const required = (schema: z.core.$ZodType): PyField => ({ schema })
const withDefault = (schema: z.core.$ZodType, value: () => unknown): PyField => ({ schema, default: value })

const OPTIONAL_STR = pyOptional(PyStrSchema)
// `BaseObject`: every built-in class starts with these two fields.
const BASE_OBJECT_FIELDS = [
  ['name', withDefault(OPTIONAL_STR, () => null)],
  ['description', withDefault(OPTIONAL_STR, () => null)],
] as const
const BASE_OBJECT_BASES = ['BaseObject', 'BaseModel'] as const

const TEST_ONLY_NESTED_BASE_MODEL: PyModelSpec = {
  name: 'TestOnlyNestedBaseModel',
  bases: ['BaseModel'],
  // `aliased_property` is read and dumped under its alias.
  fields: [
    ['a', required(PyIntSchema)],
    ['aliased_property_alias', required(PyIntSchema)],
  ],
}

const TEST_ONLY_NESTED_BASE_OBJECT: PyModelSpec = {
  name: 'TestOnlyNestedBaseObject',
  bases: BASE_OBJECT_BASES,
  fields: [...BASE_OBJECT_FIELDS, ['b', required(PyIntSchema)]],
}

const TEST_ONLY_INHERITED_BASE_OBJECT: PyModelSpec = {
  name: 'TestOnlyInheritedBaseObject',
  bases: ['TestOnlyNestedBaseObject', ...BASE_OBJECT_BASES],
  fields: [
    ...TEST_ONLY_NESTED_BASE_OBJECT.fields,
    ['c', required(PyIntSchema)],
    ['additional_field', withDefault(PyStrSchema, () => 'default_value')],
  ],
}

const TEST_ONLY_EXAMPLE: PyModelSpec = {
  name: 'TestOnlyExample',
  bases: BASE_OBJECT_BASES,
  fields: [
    ...BASE_OBJECT_FIELDS,
    ['primitive', required(PyIntSchema)],
    ['nested_base_model', required(pyModel(TEST_ONLY_NESTED_BASE_MODEL))],
    ['nested_base_object', required(PyStrSchema)],
  ],
}

const LEADERBOARD_COLUMN: PyModelSpec = {
  name: 'LeaderboardColumn',
  bases: ['BaseModel'],
  fields: [
    ['evaluation_object_ref', required(PyStrSchema)],
    ['scorer_name', required(PyStrSchema)],
    ['summary_metric_path', required(PyStrSchema)],
    ['should_minimize', withDefault(pyOptional(PyBoolSchema), () => null)],
  ],
}

const LEADERBOARD: PyModelSpec = {
  name: 'Leaderboard',
  bases: BASE_OBJECT_BASES,
  fields: [...BASE_OBJECT_FIELDS, ['columns', required(pyList(pyModel(LEADERBOARD_COLUMN)))]],
}

// `field_schema` is a JSON Schema; the reference also checks it against the JSON Schema meta-schema (not done here).
const ANNOTATION_SPEC: PyModelSpec = {
  name: 'AnnotationSpec',
  bases: BASE_OBJECT_BASES,
  fields: [
    ...BASE_OBJECT_FIELDS,
    ['field_schema', withDefault(pyDict(PyAnySchema), () => ({}))],
    ['unique_among_creators', withDefault(PyBoolSchema, () => false)],
    ['op_scope', withDefault(pyOptional(pyList(PyStrSchema)), () => null)],
  ],
}

const LOCALHOST_NAMES = new Set(['localhost', 'localhost.localdomain', 'ip6-localhost', 'ip6-loopback'])
const METADATA_HOST =
  /(?:^|\.)(?:metadata\.google\.internal|metadata\.goog|metadata\.internal|metadata\.azure\.com)\.?$/i
// IPv4 ranges Python's `ipaddress` does not call global (private, loopback, link-local, shared, documentation,
// reserved), plus multicast.
const NON_GLOBAL_V4: readonly (readonly [number, number])[] = [
  [0x00000000, 8],
  [0x0a000000, 8],
  [0x64400000, 10],
  [0x7f000000, 8],
  [0xa9fe0000, 16],
  [0xac100000, 12],
  [0xc0000000, 24],
  [0xc0000200, 24],
  [0xc0a80000, 16],
  [0xc6120000, 15],
  [0xc6336400, 24],
  [0xcb007100, 24],
  [0xe0000000, 4],
  [0xf0000000, 4],
]

function v4Global(host: string): boolean {
  const n = host.split('.').reduce((acc, part) => acc * 256 + Number(part), 0)
  return !NON_GLOBAL_V4.some(([base, bits]) => Math.floor(n / 2 ** (32 - bits)) === Math.floor(base / 2 ** (32 - bits)))
}

function v6Global(host: string): boolean {
  const h = host.toLowerCase()
  if (h === '::' || h === '::1') return false
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h)
  if (mapped) return v4Global(mapped[1] as string)
  // WHATWG URL writes a mapped address in hex (`::ffff:7f00:1`).
  const mappedHex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(h)
  if (mappedHex) {
    const n = Number.parseInt(mappedHex[1] as string, 16) * 65536 + Number.parseInt(mappedHex[2] as string, 16)
    return v4Global([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.'))
  }
  return !/^(?:fe[89ab]|f[cd]|ff|2001:db8:)/.test(h)
}

/** Weave's `is_publicly_routable_url` without DNS: http(s), a host, no localhost/metadata name, no non-global IP. */
export function isPubliclyRoutableUrl(text: string): boolean {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return false
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false
  const host = url.hostname.toLowerCase().replace(/\.$/, '')
  if (host === '') return false
  if (LOCALHOST_NAMES.has(host) || host.endsWith('.localhost') || METADATA_HOST.test(host)) return false
  // WHATWG URL normalises decimal, hex and octal IPv4 spellings to dotted form.
  if (/^\d+\.\d+\.\d+\.\d+$/.test(host)) return v4Global(host)
  if (host.startsWith('[')) return v6Global(host.slice(1, -1))
  return true
}

const INVALID_BASE_URL = 'base_url is not a valid provider URL'
const BLOCKED_HEADER = /^(?:metadata-flavor|x-aws-ec2-metadata-token(?:-ttl-seconds)?)$/i

// The reference's field validators raise `InvalidRequest`, which escapes pydantic as a plain 400 (not a
// validation error): thrown here, it ends the validation at once as there.
const PROVIDER_BASE_URL = z.pipe(
  PyStrSchema,
  z.transform((url: string) => {
    // urlparse's fragment is the text after the first `#`; an empty one is allowed.
    const hash = url.indexOf('#')
    const fragment = hash >= 0 && hash < url.length - 1
    if (url.includes('?') || fragment || !isPubliclyRoutableUrl(url)) throw new BadRequestError(INVALID_BASE_URL)
    return url
  }),
)
const PROVIDER_EXTRA_HEADERS = z.pipe(
  pyDict(PyStrSchema),
  z.transform((headers: Record<string, unknown>) => {
    if (Object.keys(headers).some((k) => BLOCKED_HEADER.test(k))) {
      throw new BadRequestError('extra_headers contains a disallowed header')
    }
    return headers
  }),
)

const PROVIDER: PyModelSpec = {
  name: 'Provider',
  bases: BASE_OBJECT_BASES,
  fields: [
    ...BASE_OBJECT_FIELDS,
    ['base_url', required(PROVIDER_BASE_URL)],
    ['api_key_name', required(PyStrSchema)],
    ['extra_headers', withDefault(PROVIDER_EXTRA_HEADERS, () => ({}))],
    ['return_type', withDefault(pyEnum(['openai']), () => 'openai')],
  ],
}

const PROVIDER_MODEL: PyModelSpec = {
  name: 'ProviderModel',
  bases: BASE_OBJECT_BASES,
  fields: [...BASE_OBJECT_FIELDS, ['provider', required(PyStrSchema)], ['max_tokens', required(PyIntSchema)]],
}

/** The built-in classes Loom validates and normalises through their model, by class name. */
export const BUILTIN_CLASS_MODELS: ReadonlyMap<string, PyModelSpec> = new Map(
  [
    TEST_ONLY_EXAMPLE,
    TEST_ONLY_NESTED_BASE_OBJECT,
    TEST_ONLY_INHERITED_BASE_OBJECT,
    LEADERBOARD,
    ANNOTATION_SPEC,
    PROVIDER,
    PROVIDER_MODEL,
  ].map((spec) => [spec.name, spec]),
)

/**
 * The rest of the newest registry: accepted and stamped with class information, but their models (large, or with
 * validators that need the SDK) are not reproduced, so values are stored as sent.
 */
export const UNMODELLED_BUILTIN_CLASSES: ReadonlySet<string> = new Set([
  'AlertSpec',
  'SavedView',
  'ComparisonView',
  'LLMStructuredCompletionModel',
  'ChartConfig',
  'AgentDashboard',
])
