/** GET /v1/releases: what the bot believes, as JSON, for people and scripts. */
import type { ConfigFile } from '../config/file.js';
import { safeEqual } from '../http/auth.js';
import { HttpError } from '../http/http-error.js';
import { bearerToken, sendJson } from '../http/io.js';
import type { Router } from '../http/router.js';
import { listPipelines } from '../routing/pipeline-origins.js';
import type { ReleaseReader } from './store/ports.js';
import type { ReleaseRecord } from './record/record.js';

export interface ReadApiDeps {
  config: ConfigFile;
  readToken?: string;
  releases: ReleaseReader;
}

/** The outbox is an implementation detail of delivery; readers get the record itself. */
function publicRecord(record: ReleaseRecord): Omit<ReleaseRecord, 'outbox' | 'notices'> {
  const { outbox: _outbox, notices: _notices, ...rest } = record;
  return rest;
}

export function requireReadToken(readToken: string | undefined, presented: string | undefined): void {
  if (readToken === undefined) {
    throw new HttpError(403, 'read_api_disabled', 'the read API is off: set API_READ_TOKEN to enable it');
  }
  if (presented === undefined || !safeEqual(readToken, presented)) {
    throw new HttpError(401, 'unauthorized', 'missing or wrong Bearer token (API_READ_TOKEN)', undefined, { 'www-authenticate': 'Bearer' });
  }
}

export function registerReadRoutes(router: Router, deps: ReadApiDeps): void {
  const knownPipeline = (name: string | null): string => {
    if (!name) throw new HttpError(400, 'missing_pipeline', 'add ?pipeline=<name> (pipelines: ' + deps.config.pipelines.map((p) => p.name).join(', ') + ')');
    if (!deps.config.pipelines.some((p) => p.name === name)) throw new HttpError(404, 'unknown_pipeline', `no pipeline "${name.slice(0, 63)}"`);
    return name;
  };

  // The pipelines routing uses now, with where each came from; `?template=` narrows to one template's.
  router.on('GET', '/v1/pipelines', async (req, res, _params, url) => {
    requireReadToken(deps.readToken, bearerToken(req));
    const template = url.searchParams.get('template');
    const limitParam = Number(url.searchParams.get('limit') ?? 500);
    const limit = Number.isInteger(limitParam) && limitParam > 0 ? Math.min(limitParam, 5_000) : 500;
    const all = listPipelines(deps.config).filter((l) => template === null || (l.origin.source === 'template' && l.origin.template === template));
    const pipelines = all.slice(0, limit).map(({ pipeline, origin }) => ({ name: pipeline.name, channel: pipeline.channel, stages: pipeline.stages.map((s) => s.name), owners: pipeline.owners ?? [], origin }));
    sendJson(res, 200, { total: all.length, pipelines });
  });

  router.on('GET', '/v1/releases', async (req, res, _params, url) => {
    requireReadToken(deps.readToken, bearerToken(req));
    const pipeline = knownPipeline(url.searchParams.get('pipeline'));
    const limitParam = Number(url.searchParams.get('limit') ?? 50);
    const limit = Number.isInteger(limitParam) && limitParam > 0 ? Math.min(limitParam, 500) : 50;
    const includeFinished = url.searchParams.get('finished') !== 'false';
    const records = await deps.releases.list(pipeline, { includeFinished, limit });
    sendJson(res, 200, { pipeline, releases: records.map(publicRecord) });
  });

  router.on('GET', '/v1/releases/:pipeline/:releaseId', async (req, res, params) => {
    requireReadToken(deps.readToken, bearerToken(req));
    const pipeline = knownPipeline(params.pipeline ?? null);
    const record = await deps.releases.get(pipeline, params.releaseId ?? '');
    if (!record) throw new HttpError(404, 'unknown_release', `no release "${(params.releaseId ?? '').slice(0, 200)}" in pipeline ${pipeline}`);
    sendJson(res, 200, publicRecord(record));
  });
}
