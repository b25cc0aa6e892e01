/** RFC 7386 merge patches and RFC 6902 JSON patches, the two patch types the stand-in accepts for custom resources. */
import { badRequest, ApiError } from './errors.js';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

interface JsonPatchOp {
  op: string;
  path: string;
  value?: unknown;
  from?: string;
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw badRequest(`json patch path "${pointer}" must start with "/"`);
  return pointer
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function unprocessable(message: string): ApiError {
  return new ApiError(422, 'Invalid', message);
}

function container(doc: unknown, tokens: string[], pointer: string): { parent: unknown; key: string } {
  let node = doc;
  for (const token of tokens.slice(0, -1)) {
    if (Array.isArray(node)) node = node[Number(token)];
    else if (isObject(node)) node = node[token];
    else node = undefined;
    if (node === undefined) throw unprocessable(`jsonpatch: doc is missing path: "${pointer}": missing value`);
  }
  return { parent: node, key: tokens[tokens.length - 1] ?? '' };
}

function read(doc: unknown, pointer: string): unknown {
  let node = doc;
  for (const token of parsePointer(pointer)) {
    if (Array.isArray(node)) node = node[Number(token)];
    else if (isObject(node)) node = node[token];
    else return undefined;
  }
  return node;
}

function arrayIndex(arr: unknown[], key: string, pointer: string, allowEnd: boolean): number {
  if (key === '-' && allowEnd) return arr.length;
  const i = Number(key);
  if (!/^\d+$/.test(key) || i > arr.length || (!allowEnd && i === arr.length)) {
    throw unprocessable(`jsonpatch: unable to access invalid index: ${key} in "${pointer}"`);
  }
  return i;
}

function add(doc: unknown, pointer: string, value: unknown): unknown {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return structuredClone(value);
  const { parent, key } = container(doc, tokens, pointer);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, pointer, true), 0, structuredClone(value));
  else if (isObject(parent)) parent[key] = structuredClone(value);
  else throw unprocessable(`jsonpatch: doc is missing path: "${pointer}"`);
  return doc;
}

function remove(doc: unknown, pointer: string): unknown {
  const tokens = parsePointer(pointer);
  const { parent, key } = container(doc, tokens, pointer);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, pointer, false), 1);
  else if (isObject(parent) && Object.prototype.hasOwnProperty.call(parent, key)) delete parent[key];
  else throw unprocessable(`jsonpatch: unable to remove nonexistent key: ${key}: missing value`);
  return doc;
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

export function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (isObject(value)) {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical(value[k])]),
    );
  }
  return value;
}

export function jsonPatch(target: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw badRequest('json patch must be an array of operations');
  let doc = structuredClone(target);
  for (const raw of ops as JsonPatchOp[]) {
    if (!isObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') {
      throw badRequest('each json patch operation needs "op" and "path"');
    }
    switch (raw.op) {
      case 'add':
        doc = add(doc, raw.path, raw.value);
        break;
      case 'remove':
        doc = remove(doc, raw.path);
        break;
      case 'replace':
        doc = remove(doc, raw.path);
        doc = add(doc, raw.path, raw.value);
        break;
      case 'move': {
        const value = read(doc, raw.from ?? '');
        doc = remove(doc, raw.from ?? '');
        doc = add(doc, raw.path, value);
        break;
      }
      case 'copy':
        doc = add(doc, raw.path, read(doc, raw.from ?? ''));
        break;
      case 'test':
        if (!deepEqual(read(doc, raw.path), raw.value)) {
          throw unprocessable(`the server rejected our request due to an error in our request: testing value ${raw.path} failed`);
        }
        break;
      default:
        throw badRequest(`unknown json patch operation "${raw.op}"`);
    }
  }
  return doc;
}
