/**
 * The notification config we ship must produce bodies our ingest accepts. Each template is
 * rendered like the engine would, with real objects, then validated by the same zod schemas.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { applicationFactBody, rolloutFactBody } from '../../src/facts/schemas.js';
import { normaliseRollout } from '../../src/facts/normalise.js';
import { renderGoTemplate } from '../helpers/go-template.js';
import { REFERENCE, fixture } from '../helpers/rollout-bodies.js';

const DEPLOY = fileURLToPath(new URL('../../deploy/notifications/', import.meta.url));
const load = (file: string) => parse(readFileSync(`${DEPLOY}${file}`, 'utf8')).data as Record<string, string>;

function templates(data: Record<string, string>) {
  return Object.entries(data)
    .filter(([k]) => k.startsWith('template.'))
    .map(([k, v]) => ({ name: k.slice('template.'.length), webhook: parse(v).webhook.glidepath as { method: string; body: string } }));
}
function triggers(data: Record<string, string>) {
  return Object.entries(data)
    .filter(([k]) => k.startsWith('trigger.'))
    .map(([k, v]) => ({ name: k.slice('trigger.'.length), conditions: parse(v) as { when: string; oncePer?: string; send: string[] }[] }));
}

// Two upstream unit-test fixtures had their name edited by hand to `canary-demo-workloadRef`
// (their selfLink still says canary-demo): an API server refuses upper case in a name, so no
// cluster sends it, and ingest refuses it. They are read with the name lower-cased.
const upstreamRollouts = readdirSync(`${REFERENCE}upstream/rollouts`).map((f) => {
  const rollout = JSON.parse(readFileSync(`${REFERENCE}upstream/rollouts/${f}`, 'utf8'));
  rollout.metadata.name = String(rollout.metadata.name).toLowerCase();
  return rollout;
});
const payloadRollouts = ['paused', 'healthy', 'aborted', 'stale'].map((n) => fixture(n).rollout);
const upstreamApps = readdirSync(`${REFERENCE}upstream/applications`).map((f) => JSON.parse(readFileSync(`${REFERENCE}upstream/applications/${f}`, 'utf8')));

describe('Argo Rollouts notification config', () => {
  const data = load('argo-rollouts-notification-configmap.yaml');

  it('posts with the Bearer token from the secret', () => {
    const service = parse(data['service.webhook.glidepath'] as string);
    expect(service.headers).toEqual(expect.arrayContaining([{ name: 'Authorization', value: 'Bearer $glidepath-token' }]));
    for (const t of templates(data)) expect(t.webhook.method).toBe('POST');
  });

  it('every trigger has a when: that requires the observed generation, and sends its own template', () => {
    const names = templates(data).map((t) => t.name);
    for (const t of triggers(data)) {
      for (const c of t.conditions) {
        expect(c.when).toContain('rollout.status.observedGeneration == string(rollout.metadata.generation)');
        expect(c.send).toEqual([t.name.replace(/^on-/, '')]);
        expect(names).toContain(c.send[0]);
      }
    }
    const subscribed = parse(data.subscriptions as string)[0];
    expect(subscribed.selector).toBe('hangar.io/release-tracked=true');
    expect(subscribed.triggers.sort()).toEqual(triggers(data).map((t) => t.name).sort());
  });

  it('all templates send the same body but for the trigger name', () => {
    const bodies = templates(data).map((t) => t.webhook.body.replace(/"event":"[^"]+"/, '"event":"X"'));
    expect(new Set(bodies).size).toBe(1);
  });

  it.each([...payloadRollouts, ...upstreamRollouts].map((r, i) => [i, r.metadata.name, r] as const))('renders an accepted fact for rollout #%i (%s)', (_i, _name, rollout) => {
    for (const t of templates(data)) {
      const body = JSON.parse(renderGoTemplate(t.webhook.body, { rollout }));
      const parsed = rolloutFactBody.safeParse(body);
      expect(parsed.error?.issues ?? []).toEqual([]);
      expect(body.event).toBe(`on-${t.name}`);
      expect(body.rollout.metadata.annotations).not.toHaveProperty(['kubectl.kubernetes.io/last-applied-configuration']);
      expect(body.rollout.metadata.annotations).not.toHaveProperty(['notified.notifications.argoproj.io']);
      const fact = normaliseRollout(parsed.data!, 'prod', Date.now());
      expect(fact.rollout.images).toEqual((rollout.spec?.template?.spec?.containers ?? []).map((c: any) => c.image).sort());
    }
  });

  it('carries the canary steps, so the thread can say step k of N', () => {
    const rollout = upstreamRollouts.find((r) => r.metadata.name === 'canary-demo');
    const t = templates(data)[0]!;
    const fact = normaliseRollout(rolloutFactBody.parse(JSON.parse(renderGoTemplate(t.webhook.body, { rollout }))), 'prod', 0);
    expect(fact.rollout.step).toMatchObject({ index: 0, count: 8 });
  });
});

describe('Argo CD notification config', () => {
  const data = load('argocd-notifications-cm.yaml');

  it('has the sync-failure trigger once per finishedAt and the long-running-operation trigger', () => {
    const byName = Object.fromEntries(triggers(data).map((t) => [t.name, t.conditions[0]!]));
    expect(byName['on-glidepath-sync-failed']).toMatchObject({
      when: "app.status.operationState != nil and app.status.operationState.phase in ['Failed', 'Error']",
      oncePer: 'app.status.operationState.finishedAt',
    });
    expect(byName['on-glidepath-sync-running-long']!.when).toContain("phase in ['Running']");
    for (const t of templates(data)) expect(t.webhook.method).toBe('POST');
  });

  it.each(upstreamApps.map((a) => [a.metadata.name, a] as const))('renders an accepted fact for application %s', (_name, app) => {
    for (const t of templates(data)) {
      const body = JSON.parse(renderGoTemplate(t.webhook.body, { app }));
      const parsed = applicationFactBody.safeParse(body);
      expect(parsed.error?.issues ?? []).toEqual([]);
      expect(body.event).toBe(`on-${t.name}`);
    }
  });
});
