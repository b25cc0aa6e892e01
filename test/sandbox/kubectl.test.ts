/** The real kubectl against the stand-in (skipped when kubectl is not installed). */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.js';
import { FakeClock } from '../../sandbox/kube/clock.js';
import { startSampleWorld, type SampleWorld } from '../../sandbox/kube/world.js';

const hasKubectl = spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0;

describe.skipIf(!hasKubectl)('kubectl against the stand-in', () => {
  let world: SampleWorld;
  let clock: FakeClock;
  let dir: string;

  beforeAll(async () => {
    dir = tempDir('glidepath-kubectl-');
    clock = new FakeClock('2026-08-20T09:00:00Z');
    world = await startSampleWorld({ clock, kubeconfigPath: join(dir, 'kubeconfig') });
    await clock.advance(30_000);
  });
  afterAll(async () => {
    await world.stop();
  });

  const args = (rest: string[]): string[] => ['--kubeconfig', join(dir, 'kubeconfig'), '--cache-dir', join(dir, 'cache'), ...rest];

  function kubectl(rest: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = execFile('kubectl', args(rest), { timeout: 30_000 }, (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
      if (input !== undefined) child.stdin?.end(input);
    });
  }

  it('kubectl get rollouts -A prints the CRD printer columns', async () => {
    const res = await kubectl(['get', 'rollouts', '-A']);
    expect(res.stderr).toBe('');
    const lines = res.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^NAMESPACE\s+NAME\s+DESIRED\s+CURRENT\s+UP-TO-DATE\s+AVAILABLE\s+AGE$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/).slice(0, 2).join('/')).sort()).toEqual(['payments/ledger', 'shop/checkout-eu', 'shop/checkout-staging', 'shop/checkout-us']);
    const dev = await kubectl(['--context', 'dev', 'get', 'ro', '-n', 'shop', '-o', 'name']);
    expect(dev.stdout.trim()).toBe('rollout.argoproj.io/checkout-dev');
  });

  it('kubectl patch: a merge patch on the main resource and one on the status subresource', async () => {
    const spec = await kubectl(['patch', 'rollout', 'checkout-eu', '-n', 'shop', '--type', 'merge', '-p', '{"spec":{"paused":true}}']);
    expect(spec.stdout.trim()).toBe('rollout.argoproj.io/checkout-eu patched');
    await clock.advance(0);
    const phase = await kubectl(['get', 'rollout', 'checkout-eu', '-n', 'shop', '-o', 'jsonpath={.spec.paused} {.status.phase} {.status.message}']);
    expect(phase.stdout).toBe('true Paused manually paused');
    const status = await kubectl(['patch', 'rollout', 'checkout-staging', '-n', 'shop', '--subresource=status', '--type', 'merge', '-p', '{"status":{"promoteFull":true}}']);
    expect(status.stdout.trim()).toBe('rollout.argoproj.io/checkout-staging patched');
    const denied = await kubectl(['--context', 'viewer@prod', 'patch', 'rollout', 'checkout-eu', '-n', 'shop', '--type', 'merge', '-p', '{"spec":{"paused":false}}']);
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toContain('Error from server (Forbidden): rollouts.argoproj.io "checkout-eu" is forbidden: User "viewer" cannot patch resource "rollouts" in API group "argoproj.io" in the namespace "shop"');
  });

  it('kubectl describe shows the Rollout with its Events; kubectl apply updates it', async () => {
    const described = await kubectl(['describe', 'rollout', 'checkout-eu', '-n', 'shop']);
    expect(described.stderr).toBe('');
    expect(described.stdout).toMatch(/Events:[\s\S]*RolloutCompleted\s+\S+\s+rollouts-controller\s+Rollout completed update to revision 1/);
    const current = await kubectl(['get', 'rollout', 'checkout-eu', '-n', 'shop', '-o', 'json']);
    const obj = JSON.parse(current.stdout) as { spec: { replicas: number } };
    obj.spec.replicas = 6;
    const applied = await kubectl(['apply', '-f', '-'], JSON.stringify(obj));
    expect(applied.stdout.trim()).toBe('rollout.argoproj.io/checkout-eu configured');
    await clock.advance(0);
    const after = await kubectl(['get', 'rollout', 'checkout-eu', '-n', 'shop', '-o', 'jsonpath={.spec.replicas} {.status.replicas}']);
    expect(after.stdout).toBe('6 6');
  });

  it('kubectl auth can-i answers from the sandbox RBAC, including the custom verb promote', async () => {
    // Context "prod" is Glidepath's own service account (the default context is admin@prod).
    expect((await kubectl(['--context', 'prod', 'auth', 'can-i', 'promote', 'stages/prod', '-n', 'kargo-checkout'])).stdout.trim()).toBe('yes');
    expect((await kubectl(['--context', 'viewer@prod', 'auth', 'can-i', 'promote', 'stages/prod', '-n', 'kargo-checkout'])).stdout.trim()).toBe('no');
    expect((await kubectl(['--context', 'prod', 'auth', 'can-i', 'patch', 'rollouts', '--subresource=status', '-n', 'shop'])).stdout.trim()).toBe('yes');
    expect((await kubectl(['--context', 'prod', 'auth', 'can-i', 'delete', 'rollouts', '-n', 'shop'])).stdout.trim()).toBe('no');
    expect((await kubectl(['auth', 'can-i', 'delete', 'rollouts', '-n', 'shop'])).stdout.trim()).toBe('yes');
  });

  it('kubectl get --watch streams changes', async () => {
    const child = spawn('kubectl', args(['get', 'rollout', 'checkout-us', '-n', 'shop', '--watch', '-o', 'jsonpath={.metadata.name} {.spec.paused}{"\\n"}']));
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await until(() => out.includes('checkout-us'));
      await kubectl(['patch', 'rollout', 'checkout-us', '-n', 'shop', '--type', 'merge', '-p', '{"spec":{"paused":true}}']);
      await until(() => out.includes('checkout-us true'));
    } finally {
      child.kill();
    }
    expect(out.split('\n')[0]).toBe('checkout-us ');
  });

  it('kubectl create of a Kargo Promotion returns its real name', async () => {
    const stages = await kubectl(['get', 'freight', '-n', 'kargo-checkout', '-o', 'jsonpath={range .items[?(@.alias=="steady-otter")]}{.metadata.name}{end}']);
    const freight = stages.stdout.trim();
    expect(freight).toMatch(/^[0-9a-f]{40}$/);
    const res = await kubectl(['create', '-f', '-'], JSON.stringify({ apiVersion: 'kargo.akuity.io/v1alpha1', kind: 'Promotion', metadata: { generateName: 'promo-', namespace: 'kargo-checkout' }, spec: { stage: 'dev', freight } }));
    expect(res.stderr).toBe('');
    expect(res.stdout.trim()).toMatch(new RegExp(`^promotion\\.kargo\\.akuity\\.io/dev\\.[0-9a-z]{26}\\.${freight.slice(0, 7)} created$`));
    // kubectl leaves field validation to the server (it reads /openapi/v3): Strict refuses unknown fields.
    const strict = await kubectl(['create', '-f', '-'], JSON.stringify({ apiVersion: 'kargo.akuity.io/v1alpha1', kind: 'Promotion', metadata: { generateName: 'promo-', namespace: 'kargo-checkout' }, spec: { stage: 'dev', freight, bogus: 1 } }));
    expect(strict.code).not.toBe(0);
    expect(strict.stderr).toContain('Promotion in version "v1alpha1" cannot be handled as a Promotion: strict decoding error: unknown field "spec.bogus"');
  });
});

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !condition(); i++) await new Promise((r) => setTimeout(r, 25));
  if (!condition()) throw new Error('kubectl output never matched');
}
