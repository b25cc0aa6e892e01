/**
 * What `glidepath check` asks a cluster: does its API server answer and take our credentials,
 * and may those credentials do what src/kube/verbs.ts declares, in the namespaces the config's
 * stages name? Answers are values (the CLI words them); nothing here changes anything.
 */
import type { ConfigFile, StageConfig } from '../config/file.js';
import type { KubeApi } from './api.js';
import { KubeActionError, networkCode } from './errors.js';
import { VERBS, type VerbDeclaration } from './verbs.js';
import { authorizationOf } from '../policy/cluster-authorization.js';

export type ServerProbe =
  | { kind: 'answers'; version: string }
  /** Connection refused, DNS, TLS, timeout: nothing answered. */
  | { kind: 'unreachable'; detail: string }
  /** 401/403: the server answered and refused the credentials. */
  | { kind: 'rejected'; status: number }
  | { kind: 'failed'; detail: string };

/** The deepest cause's words ("bad port", "self-signed certificate"), when no error code says it. */
function innermost(err: unknown): string {
  let e = err;
  for (let depth = 0; depth < 5 && (e as { cause?: unknown })?.cause instanceof Error; depth++) e = (e as { cause: Error }).cause;
  const message = e instanceof Error ? e.message : String(e);
  return message.replace(/\s+/g, ' ').slice(0, 120) || 'connection failed';
}

export async function probeServer(api: KubeApi): Promise<ServerProbe> {
  try {
    return { kind: 'answers', version: await api.serverVersion() };
  } catch (err) {
    if (!(err instanceof KubeActionError)) return { kind: 'failed', detail: String(err) };
    if (err.kind === 'unauthorized' || err.kind === 'forbidden') return { kind: 'rejected', status: err.status ?? 401 };
    if (err.kind === 'timeout') return { kind: 'unreachable', detail: `no answer within ${api.requestTimeoutMs} ms` };
    if (err.kind === 'unreachable') return { kind: 'unreachable', detail: networkCode(err.cause) ?? innermost(err.cause) };
    return { kind: 'failed', detail: err.message };
  }
}

/** The namespace a stage's targets live in, per resource verbs.ts names (`rollouts/status` counts as `rollouts`). */
const NAMESPACE_OF: Record<string, (s: StageConfig) => string | undefined> = {
  rollouts: (s) => s.rollouts?.namespace,
  analysisruns: (s) => s.rollouts?.namespace,
  // An ApplicationSet's children are Applications in its namespace.
  applications: (s) => s.applications?.namespace ?? s.applicationSet?.namespace,
  applicationsets: (s) => s.applicationSet?.namespace,
  // The freeze gate reads the AppProjects of what a RollingSync step or refresh touches: Argo CD
  // keeps them in its own namespace, where the ApplicationSets of stages live too.
  appprojects: (s) => s.applicationSet?.namespace,
  stages: (s) => s.kargo?.project,
  freights: (s) => s.kargo?.project,
  promotions: (s) => s.kargo?.project,
};

export interface AccessNeed {
  verb: VerbDeclaration;
  /** undefined: at the cluster scope (impersonation, access reviews). */
  namespace?: string;
}

/**
 * Every declared verb in every namespace of this cluster's stages that uses its resource. A
 * resource verbs.ts declares but this table does not know is asked in every namespace of its
 * group's stages, so a new declaration is checked rather than silently skipped.
 */
export function accessNeeds(config: Pick<ConfigFile, 'pipelines'> & { clusters?: Pick<ConfigFile['clusters'][number], 'name' | 'authorization'>[] }, cluster: string): AccessNeed[] {
  const stages = config.pipelines.flatMap((p) => p.stages).filter((s) => s.cluster === cluster);
  const out: AccessNeed[] = [];
  const actsAsThePerson = authorizationOf({ clusters: config.clusters ?? [] }, cluster) !== 'config';
  for (const verb of VERBS) {
    if (verb.actingAsThePerson) {
      if (actsAsThePerson && stages.length > 0) out.push({ verb });
      continue;
    }
    const base = verb.resource.split('/')[0] as string;
    const namespaceOf = NAMESPACE_OF[base] ?? ((s: StageConfig) => (verb.apiGroup === 'kargo.akuity.io' ? s.kargo?.project : (s.rollouts ?? s.applications ?? s.applicationSet)?.namespace));
    const namespaces = new Set(stages.map(namespaceOf).filter((n): n is string => n !== undefined));
    for (const namespace of [...namespaces].sort()) out.push({ verb, namespace });
  }
  return out;
}

export interface AccessReport {
  asked: number;
  missing: AccessNeed[];
}

/** One SelfSubjectAccessReview per need, at once; a review that cannot be asked fails the whole report. */
export async function missingAccess(api: KubeApi, needs: readonly AccessNeed[]): Promise<AccessReport> {
  const answers = await Promise.all(
    needs.map(async (need) => {
      const [resource, subresource] = need.verb.resource.split('/') as [string, string | undefined];
      const allowed = await api.canI({ group: need.verb.apiGroup, resource, ...(subresource ? { subresource } : {}), verb: need.verb.verb, ...(need.namespace ? { namespace: need.namespace } : {}) });
      return allowed ? undefined : need;
    }),
  );
  return { asked: needs.length, missing: answers.filter((n): n is AccessNeed => n !== undefined) };
}

/** `get rollouts/status (argoproj.io) in shop, prod-eu`, grouped by verb and resource. */
export function describeMissing(missing: readonly AccessNeed[]): string[] {
  const byVerb = new Map<string, string[]>();
  for (const m of missing) {
    const key = `${m.verb.verb} ${m.verb.resource} (${m.verb.apiGroup || 'core'})`;
    byVerb.set(key, [...(byVerb.get(key) ?? []), m.namespace ?? 'the cluster scope']);
  }
  return [...byVerb].map(([key, namespaces]) => `${key} in ${namespaces.join(', ')}`);
}
