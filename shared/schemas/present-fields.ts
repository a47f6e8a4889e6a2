import * as z from 'zod/mini'

type LooseObjectSchema = z.ZodMiniObject<z.core.$ZodLooseShape, z.core.$loose>

/**
 * A parse of a loose object schema that visits only the fields the input carries (and the required ones). zod/mini's
 * object parser runs every field of the shape, present or not: a chat request sets a handful of the contract's ~60
 * fields, and the full parse was the largest single cost of the gateway's request path.
 *
 * It returns what zod's full parse would return: each present field's value as zod parses it, unknown keys as they
 * are, and an own `__proto__` key left out at every depth, as zod leaves it out (assigning it would replace the
 * output's prototype). For a request that is JSON, `__proto__` is then what any other unknown field is to vLLM
 * (pydantic): ignored. Fields that are absent are absent (the schemas it is used for have no defaults, pinned by a
 * test). `undefined` says nothing about which issues there are: the caller runs the full parse for zod's exact list.
 */
export function presentFieldsParse<S extends LooseObjectSchema>(
  schema: S,
): (input: unknown) => z.output<S> | undefined {
  const fields = new Map<string, z.core.$ZodType>(Object.entries(schema._zod.def.shape))
  const required = [...fields].filter(([, field]) => field._zod.optin !== 'optional').map(([key]) => key)
  return (input) => {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) return undefined
    const record = input as Record<string, unknown>
    for (const key of required) if (!Object.hasOwn(record, key)) return undefined
    const output: Record<string, unknown> = {}
    for (const key in record) {
      if (key === '__proto__') continue
      const field = fields.get(key)
      if (field === undefined) {
        output[key] = record[key]
        continue
      }
      const parsed = z.safeParse(field, record[key])
      if (!parsed.success) return undefined
      output[key] = parsed.data
    }
    return output as z.output<S>
  }
}
