/**
 * A schema's deeply strict form: every object in it, nested ones too, rejects a key it does not name.
 * Writers check what they write with it (a field the schema does not name is a bug in the writer), while
 * readers keep the loose schema, so a file a later version wrote still reads (docs/schemas/README.md#versions).
 */
import { z } from 'zod';

export function strictDeep<S extends z.ZodType>(schema: S): S {
  return strictOf(schema) as S;
}

function strictOf(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodObject) {
    return z.strictObject(
      Object.fromEntries(Object.entries(schema.shape as Record<string, z.ZodType>).map(([k, v]) => [k, strictOf(v)])),
    );
  }
  if (schema instanceof z.ZodArray) return z.array(strictOf(schema.element as z.ZodType));
  if (schema instanceof z.ZodOptional) return strictOf(schema.unwrap() as z.ZodType).optional();
  if (schema instanceof z.ZodNullable) return strictOf(schema.unwrap() as z.ZodType).nullable();
  if (schema instanceof z.ZodDefault)
    return strictOf(schema.removeDefault() as z.ZodType).default(schema.def.defaultValue);
  if (schema instanceof z.ZodRecord)
    return z.record(schema.keyType as z.ZodString, strictOf(schema.valueType as z.ZodType));
  if (schema instanceof z.ZodTuple)
    return z.tuple((schema.def.items as z.ZodType[]).map(strictOf) as [z.ZodType, ...z.ZodType[]]);
  if (schema instanceof z.ZodUnion) return z.union((schema.options as z.ZodType[]).map(strictOf));
  return schema;
}
