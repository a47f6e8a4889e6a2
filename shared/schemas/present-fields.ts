import * as z from 'zod/mini'

type LooseObjectSchema = z.ZodMiniObject<z.core.$ZodLooseShape, z.core.$loose>

/**
 * A validity check for a loose object schema that visits only the fields the input carries (and the required ones).
 * zod/mini's object parser runs every field of the shape, present or not: a chat request sets a handful of the
 * contract's ~60 fields, and the full parse was the largest single cost of the gateway's request path.
 *
 * `true` means zod would accept the input; the caller can then use the input itself, which equals zod's output for
 * schemas without transforms or defaults (true of the request schemas it is used for, and pinned by a test). `false`
 * says nothing about which issues there are: the caller runs the full parse for zod's exact issue list.
 */
export function presentFieldsCheck(schema: LooseObjectSchema): (input: unknown) => boolean {
  const fields = new Map<string, z.core.$ZodType>(Object.entries(schema._zod.def.shape))
  const required = [...fields].filter(([, field]) => field._zod.optin !== 'optional').map(([key]) => key)
  return (input) => {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) return false
    const record = input as Record<string, unknown>
    for (const key of required) if (!Object.hasOwn(record, key)) return false
    for (const key in record) {
      const field = fields.get(key)
      if (field !== undefined && !z.safeParse(field, record[key]).success) return false
    }
    return true
  }
}
