/**
 * The Kargo API client against real HTTP: the Kargo API stand-in for Kargo's answers, and a bare
 * server for what a broken or hostile one might do (hang, answer without end, answer with HTML).
 */
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeActionError } from '../../src/kube/errors.js';
import { KargoApiClient } from '../../src/kube/kargo-api.js';
import { FakeClock } from '../../sandbox/kube/clock.js';
import { kargoObjects } from '../helpers/kargo-objects.js';
import { startKubeWorld, type KubeWorld } from './support.js';

const NS = 'kargo-demo';
const NEW = 'f0e1d2c3b4a5968778695a4b3c2d1e0f98765432';
let world: KubeWorld | undefined;
let bare: Server | undefined;

afterEach(async () => {
  await world?.close();
  world = undefined;
  if (bare) {
    bare.closeAllConnections();
    await new Promise((r) => bare!.close(r));
    bare = undefined;
  }
});

async function bareServer(handler: Parameters<typeof createServer>[1]): Promise<string> {
  bare = createServer(handler);
  await new Promise<void>((r) => bare!.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(bare.address() as { port: number }).port}`;
}

describe('KargoApiClient.promoteToStage', () => {
  it("answers Kargo's 4xx with refusals naming the cause, and 201 with the created object", async () => {
    world = await startKubeWorld({ clock: new FakeClock('2026-08-20T12:00:00Z'), kargoApi: true });
    const kargo = kargoObjects(world.store, NS);
    kargo.stage('staging', { direct: true });
    kargo.stage('prod', { stages: ['staging'] });
    kargo.freight(NEW, 'jolly-jaguar', '2026-08-20T11:30:00Z');
    const url = world.standIn.kargoApi!.url;
    const client = (token: string) => new KargoApiClient({ cluster: 'prod', url, token });

    const created = await client('glidepath-token').promoteToStage(NS, 'staging', { freightAlias: 'jolly-jaguar' });
    expect(created).toMatchObject({ kind: 'done', status: 201, body: { spec: { stage: 'staging', freight: NEW } } });
    expect((created as { body: { metadata: { name: string } } }).body.metadata.name).toMatch(/^staging\./);

    const refusal = async (token: string, stage: string, freight: string) => {
      const r = await client(token).promoteToStage(NS, stage, { freight });
      if (r.kind !== 'refused') throw new Error('expected a refusal');
      return [r.details.why, r.details.status, r.reason];
    };
    expect(await refusal('no-promote-token', 'staging', NEW)).toEqual([
      'forbidden',
      403,
      `Glidepath's Kargo token may not promote Stage staging in prod/kargo-demo (needs the promote verb on stages.kargo.akuity.io/staging); nothing was changed. Kargo said: stages.kargo.akuity.io "staging" is forbidden: promote is not permitted`,
    ]);
    expect(await refusal('glidepath-token', 'prod', NEW)).toEqual(['unavailable', 400, `Freight not available: Freight "${NEW}" is not available to Stage "prod"; nothing was changed`]);
    expect(await refusal('glidepath-token', 'nope', NEW)).toEqual(['not-found', 404, `Kargo's API (${url}) of cluster prod found nothing to promote: Stage "nope" not found in project "kargo-demo"; nothing was changed`]);
    expect((await refusal('wrong-token-0123456789', 'staging', NEW)).slice(0, 2)).toEqual(['unauthorized', 401]);
  });

  it('bounds the time and the size of an answer, and escapes what the server says', async () => {
    const url = await bareServer((req, res) => {
      if (req.url!.includes('/stages/slow/')) return; // never answers
      if (req.url!.includes('/stages/huge/')) {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(`{"pad":"${'x'.repeat(4096)}"}`);
        return;
      }
      res.writeHead(409, { 'content-type': 'text/html' });
      res.end('<b>@channel</b> conflict\n\nsecond line');
    });
    const client = new KargoApiClient({ cluster: 'prod', url, token: 't', timeoutMs: 300, maxResponseBytes: 1024 });
    const slow = await client.promoteToStage(NS, 'slow', { freight: NEW }).catch((e: unknown) => e);
    expect(slow).toBeInstanceOf(KubeActionError);
    expect(slow).toMatchObject({ kind: 'timeout', message: `Kargo's API (${url}) of cluster prod did not answer within 300 ms when Glidepath asked to promote Stage slow in kargo-demo; the promotion may or may not have been created, look before retrying` });
    const huge = await client.promoteToStage(NS, 'huge', { freight: NEW }).catch((e: unknown) => e);
    expect(huge).toMatchObject({ kind: 'malformed', message: expect.stringContaining('with more than 1024 bytes (HTTP 201)') });
    const html = await client.promoteToStage(NS, 'odd', { freight: NEW });
    expect(html).toMatchObject({ kind: 'refused', details: { why: 'rejected', status: 409 }, reason: `Kargo's API (${url}) of cluster prod refused to promote Stage odd in kargo-demo (HTTP 409): &lt;b&gt;@channel&lt;/b&gt; conflict second line; nothing was changed` });
    // A port nothing listens on any more.
    const gone = createServer();
    await new Promise<void>((r) => gone.listen(0, '127.0.0.1', () => r()));
    const port = (gone.address() as { port: number }).port;
    await new Promise((r) => gone.close(r));
    const closed = new KargoApiClient({ cluster: 'prod', url: `http://127.0.0.1:${port}`, token: 't' });
    expect(await closed.promoteToStage(NS, 'x', { freight: NEW }).catch((e: unknown) => e)).toMatchObject({ kind: 'unreachable', message: expect.stringContaining('(ECONNREFUSED); nothing was changed') });
  });
});
