/**
 * The projection a lean schema reads through (applicationCoreSchema): the fields of its `z.object`
 * shapes copied, a null one left out (read as absent, so each field needs only `.optional()`),
 * nested strict objects and arrays of them projected in turn, anything else (a loose object, a
 * record, a list of strings) kept as it came. Derived from the schema, so the fields are named once.
 *
 * Generated as code with each field named, as zod compiles its own object parsers: a generic loop
 * reading `value[key]` from thousands of children cost a freshness check more than the schema's own
 * checks did (bench/freshness.ts, the projection was the first of Glidepath's own costs).
 */
import type { z } from 'zod';

type Projection = (value: unknown) => unknown;

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  innerType?: z.ZodType;
  element?: z.ZodType;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The schema under `.optional()`. */
function unwrapped(schema: z.ZodType): z.ZodType {
  let s = schema;
  while (defOf(s).type === 'optional') s = defOf(s).innerType!;
  return s;
}

/** A strict or stripping object (its unknown fields dropped): one the projection copies field by field. */
const isClosedObject = (def: Def): boolean => def.type === 'object' && def.shape !== undefined && def.catchall === undefined;

/** The projection for values of `schema`, a `z.object` (not loose): see the file's comment. */
export function projectionOf(schema: z.ZodType): Projection {
  const sources: string[] = [];
  const emit = (object: z.ZodType): string => {
    const id = `p${sources.length}`;
    sources.push('');
    const lines: string[] = [];
    for (const [key, field] of Object.entries(defOf(object).shape!)) {
      if (key === '__proto__') throw new Error('a projection cannot copy a field named __proto__');
      const k = JSON.stringify(key);
      const inner = defOf(unwrapped(field));
      const element = inner.type === 'array' ? defOf(unwrapped(inner.element!)) : undefined;
      let value = 'f';
      if (isClosedObject(inner)) value = `${emit(unwrapped(field))}(f)`;
      else if (element && isClosedObject(element)) value = `(Array.isArray(f) ? f.map(${emit(unwrapped(inner.element!))}) : f)`;
      lines.push(`f = v[${k}]; if (f !== undefined && f !== null) out[${k}] = ${value};`);
    }
    sources[Number(id.slice(1))] = `function ${id}(v) {\n  if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;\n  const out = {};\n  let f;\n  ${lines.join('\n  ')}\n  return out;\n}`;
    return id;
  };
  if (!isClosedObject(defOf(schema))) throw new Error('a projection is made from a z.object');
  const root = emit(schema);
  // The code names only the schema's own field names (quoted by JSON.stringify), nothing from a cluster.
  return new Function(`'use strict';\n${sources.join('\n')}\nreturn ${root};`)() as Projection;
}
