/** GET /v1/audit: the audit stream, newest first (Bearer API_READ_TOKEN). */
import { HttpError } from '../http/http-error.js';
import { bearerToken, sendJson } from '../http/io.js';
import type { Router } from '../http/router.js';
import { requireReadToken } from '../releases/read-api.js';
import type { AuditLog } from './audit-log.js';

export function registerAuditRoutes(router: Router, deps: { readToken?: string; audit: AuditLog }): void {
  router.on('GET', '/v1/audit', async (req, res, _params, url) => {
    requireReadToken(deps.readToken, bearerToken(req));
    const limitParam = url.searchParams.get('limit');
    const limit = limitParam === null ? 100 : Number(limitParam);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new HttpError(400, 'invalid_limit', 'limit must be a whole number from 1 to 1000');
    const before = url.searchParams.get('before') ?? undefined;
    if (before !== undefined && !/^\d+-\d+$/.test(before)) throw new HttpError(400, 'invalid_before', 'before must be an entry id such as 1787217192000-0');
    const entries = await deps.audit.list({
      limit,
      before,
      actor: url.searchParams.get('actor') ?? undefined,
      action: url.searchParams.get('action') ?? undefined,
    });
    sendJson(res, 200, { entries, next: entries.length === limit ? entries[entries.length - 1]?.id : undefined });
  });
}
