/**
 * Runs the sample world on the real clock until interrupted: `tsx sandbox/kube/start-world.ts`.
 * With GLIDEPATH_URL set, the notifications engines POST facts to that Glidepath, using the ingest
 * tokens from INGEST_TOKENS (`dev=<token>,prod=<token>`, the same variable Glidepath reads).
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { DEFAULT_CONTEXT, KUBECONFIG_CONTEXTS, startSampleWorld, type SampleWorld } from './world.js';

export interface WorldFromEnv {
  world: SampleWorld;
  kubeconfigPath: string;
}

const WorldEnv = z.object({
  SANDBOX_DIR: z.string().default('.sandbox'),
  GLIDEPATH_URL: z.url().optional(),
  INGEST_TOKENS: z
    .string()
    .regex(/^([a-z0-9-]+=[^,=]+)(,[a-z0-9-]+=[^,=]+)*$/, 'INGEST_TOKENS must look like dev=<token>,prod=<token>')
    .optional(),
  SANDBOX_HEARTBEAT_MS: z.coerce.number().int().positive().optional(),
});

export async function startWorldFromEnv(rawEnv: NodeJS.ProcessEnv = process.env): Promise<WorldFromEnv> {
  const env = WorldEnv.parse(rawEnv);
  const dir = resolve(env.SANDBOX_DIR);
  mkdirSync(dir, { recursive: true });
  const kubeconfigPath = resolve(dir, 'kubeconfig');
  const tokens = Object.fromEntries((env.INGEST_TOKENS ?? '').split(',').filter(Boolean).map((pair) => pair.split('=', 2) as [string, string]));
  const url = env.GLIDEPATH_URL?.replace(/\/$/, '');
  const world = await startSampleWorld({
    kubeconfigPath,
    ...(url && tokens.dev && tokens.prod
      ? { webhooks: { rolloutsUrl: `${url}/v1/facts/rollouts`, argocdUrl: `${url}/v1/facts/argocd`, tokens: { dev: tokens.dev, prod: tokens.prod } } }
      : {}),
    heartbeatEveryMs: env.SANDBOX_HEARTBEAT_MS,
  });
  return { world, kubeconfigPath };
}

async function main(): Promise<void> {
  const { world, kubeconfigPath } = await startWorldFromEnv();
  console.log(`dev  cluster: ${world.clusters.dev.server.url}`);
  console.log(`prod cluster: ${world.clusters.prod.server.url}`);
  console.log(`kubeconfig:   ${kubeconfigPath}  (current context ${DEFAULT_CONTEXT})`);
  for (const c of KUBECONFIG_CONTEXTS) console.log(`  ${c.contexts.padEnd(24)} ${c.who}`);
  console.log(`try:          kubectl --kubeconfig ${kubeconfigPath} get rollouts -A`);
  const stop = async (): Promise<void> => {
    await world.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
