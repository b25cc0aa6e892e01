/** Request and response plumbing of the stand-in API server: JSON bodies with a size limit, patch content types, verbs. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from './errors.js';
import type { ResourceType } from './resources.js';
import type { PatchType } from './store.js';

/** A request path resolved to a resource type (and namespace, name, subresource when present). */
export interface ResourcePath {
  rt: ResourceType;
  namespace?: string;
  name?: string;
  subresource?: string;
}

export const JSON_TYPE = 'application/json';

export function send(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': JSON_TYPE, 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendError(res: ServerResponse, err: ApiError): void {
  send(res, err.code, err.toStatus());
}

export async function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return (await readBuffer(req, limit)).toString('utf8');
}

export function readBuffer(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        reject(new ApiError(413, 'RequestEntityTooLarge', 'the request is too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export function patchTypeOf(contentType: string | undefined, rt: ResourceType): PatchType {
  const ct = (contentType ?? '').split(';')[0]!.trim();
  if (ct === 'application/merge-patch+json') return 'merge';
  if (ct === 'application/json-patch+json') return 'json';
  // The API server serves strategic merge patches only for built-in types.
  if (ct === 'application/strategic-merge-patch+json' && rt.group === '') return 'merge';
  throw new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`,
  );
}

export function verbOf(method: string, path: ResourcePath, watch: boolean): string {
  switch (method) {
    case 'GET':
      return path.name ? 'get' : watch ? 'watch' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return path.name ? 'delete' : 'deletecollection';
    default:
      throw new ApiError(405, 'MethodNotAllowed', `method ${method} is not allowed`);
  }
}

export function isTrue(v: string | null): boolean {
  return v === 'true' || v === '1';
}
