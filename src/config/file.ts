/**
 * The YAML config: clusters, pipelines, stages and permissions. Validated with zod so that a
 * bad file stops start-up with every problem named by its path.
 */
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { compileLabelSelector, LabelSelectorError, type CompiledLabelSelector } from '../model/label-selector.js';
import { compileStageName, StageSelectorError, type KargoStageSelection } from '../model/kargo-stage-selector.js';
import type { Env } from './env.js';
import { ConfigError, formatIssues } from './errors.js';
import { readConfigSource } from './source.js';
import { approvalsSchema } from './approvals.js';
import { identitiesSchema } from './identities.js';
import { freezesSchema } from './freezes.js';
import { fillDeep, fillText, pipelineTemplateSchema, sampleBindings, type TemplateBindings } from './templates.js';

/** A stage or generator naming a cluster the file does not list: which, and the ones it does. */
function unknownCluster(name: string, clusterNames: ReadonlySet<string>): string {
  return `unknown cluster "${name}" (clusters: ${[...clusterNames].join(', ') || 'none'})`;
}

const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const name = (what: string) =>
  z
    .string()
    .min(1)
    .max(63)
    .regex(NAME, `${what} must be lowercase letters, digits and "-" (like a Kubernetes name)`);

/** Parsed here, once: the config holds the compiled matcher (and its text), never a string to parse again. */
/** A selector in the config's text, compiled once; a config that was parsed already parses again to itself. */
const labelSelector = z.union([z.string(), z.custom<CompiledLabelSelector>((v) => typeof v === 'object' && v !== null && typeof (v as CompiledLabelSelector).matches === 'function' && typeof (v as CompiledLabelSelector).text === 'string')]).transform((value, ctx) => {
  if (typeof value !== 'string') return value;
  try {
    return compileLabelSelector(value);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: err instanceof LabelSelectorError ? err.message : String(err) });
    return z.NEVER;
  }
});

const slackPrincipal = z
  .string()
  .regex(/^[USW][A-Z0-9]{2,}$/, 'must be a Slack user id (U…/W…) or user group id (S…)');

const permissions = z
  .object({
    approve: z.array(slackPrincipal).default([]),
    abort: z.array(slackPrincipal).default([]),
    promote: z.array(slackPrincipal).default([]),
    /**
     * Who may ask Argo CD to refresh the stage's Applications (`freshness --refresh`, Refresh and
     * approve). Unset: whoever may approve, since a refresh is what an approval on fresh state needs.
     */
    refresh: z.array(slackPrincipal).optional(),
    /** Approvals of this stage need two different people: the same as `approvals: { required: 2, excludeAuthor: false }`. */
    requireTwoApprovers: z.boolean().default(false),
  })
  .strict();

const approvals = approvalsSchema(slackPrincipal);

const rolloutsTarget = z.object({ namespace: name('namespace'), selector: labelSelector }).strict();
const applicationsTarget = z
  .object({ namespace: name('namespace').default('argocd'), selector: labelSelector })
  .strict();
const applicationSetTarget = z
  .object({ namespace: name('namespace').default('argocd'), name: name('ApplicationSet name'), step: z.number().int().min(1).optional() })
  .strict();
/** A Kargo Stage name in Kargo's stageSelector grammar (exact, `glob:…`, `regex:…`), checked at load. */
const kargoStageName = z.string().min(1).max(512).superRefine((text, ctx) => {
  try {
    compileStageName(text);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: err instanceof StageSelectorError ? err.message : String(err) });
  }
});
const kargoTarget = z
  .object({
    project: name('Kargo project'),
    /** Exact name, `glob:<pattern>` or `regex:<pattern>`, as Kargo's own stageSelector; ANDed with `selector`. */
    stage: kargoStageName.optional(),
    selector: labelSelector.optional(),
    /** Present when a config that was parsed already is parsed again: computed anew below. */
    selection: z.unknown().optional(),
  })
  .strict()
  .refine((k) => k.stage !== undefined || k.selector !== undefined, {
    message: 'set kargo.stage (a name, glob:… or regex:…), kargo.selector (labels), or both',
  })
  .transform(({ selection: _previous, ...k }) => {
    // Compiled once: routing, the watch and commands all match with this.
    const selection: KargoStageSelection = { project: k.project, ...(k.stage ? { name: compileStageName(k.stage) } : {}), ...(k.selector ? { labels: k.selector } : {}) };
    return { ...k, selection };
  });

const stage = z
  .object({
    name: name('stage name'),
    cluster: name('cluster name'),
    rollouts: rolloutsTarget.optional(),
    applications: applicationsTarget.optional(),
    applicationSet: applicationSetTarget.optional(),
    kargo: kargoTarget.optional(),
    stallAfterMinutes: z.number().positive().optional(),
    permissions: permissions.optional(),
    approvals: approvals.optional(),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.approvals && s.permissions?.requireTwoApprovers) {
      ctx.addIssue({ code: 'custom', path: ['approvals'], message: 'set approvals.required or permissions.requireTwoApprovers, not both (requireTwoApprovers: true is approvals: { required: 2 })' });
    }
    const kinds = (['rollouts', 'applications', 'applicationSet', 'kargo'] as const).filter((k) => s[k] !== undefined);
    if (kinds.length !== 1) {
      ctx.addIssue({
        code: 'custom',
        message: `a stage selects its targets with exactly one of rollouts, applications, applicationSet or kargo (found ${kinds.length === 0 ? 'none' : kinds.join(', ')})`,
      });
    }
  });

/** https, or http to a loopback address only (a port-forward, a sidecar, tests): the bearer token travels with every call. */
const kargoApi = z
  .object({
    url: z
      .string()
      .max(2048)
      .refine((value) => {
        if (!URL.canParse(value)) return false;
        const url = new URL(value);
        if (url.username || url.password || url.search || url.hash) return false;
        return url.protocol === 'https:' || (url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname));
      }, 'must be an https:// URL of Kargo\'s API server such as https://kargo.example.com (http:// only to 127.0.0.1, localhost or [::1]; no user, query or fragment)'),
  })
  .strict();

const cluster = z
  .object({
    name: name('cluster name'),
    kubeconfigContext: z.string().min(1).optional(),
    kubeconfigPath: z.string().min(1).optional(),
    inCluster: z.boolean().optional(),
    /**
     * Start-up goes on without this cluster when its context or kubeconfig is missing or its API
     * server refuses our credentials (said in the log); by default either stops start-up. Its
     * stages' actions refuse with the reason until it can be configured (tried again at each use).
     */
    optional: z.boolean().default(false),
    argocdNamespaces: z.array(name('namespace')).min(1).default(['argocd']),
    /** Where this cluster's facts come from: the notification webhooks, a watch of the cluster, or both. */
    facts: z.enum(['webhook', 'watch', 'both']).default('webhook'),
    /** Kargo's own API (target-aware Stages are promoted through it); its token is in KARGO_API_TOKENS, never here. */
    kargoApi: kargoApi.optional(),
    /**
     * Who decides whether a person may act here: `config` (the stages' permissions, Glidepath's
     * own credentials), `kubernetes` (the write is sent as the person's Kubernetes identity from
     * `identities`, and this cluster's RBAC decides), or `both` (both must allow).
     */
    authorization: z.enum(['config', 'kubernetes', 'both']).default('config'),
  })
  .strict()
  .refine((c) => !(c.inCluster && c.kubeconfigContext), {
    message: 'set either inCluster or kubeconfigContext, not both',
  });

/** A Slack channel id: the config's channels and a template's `glidepath.io/channel` annotations alike. */
export const channelId = z.string().regex(/^[CGD][A-Z0-9]{2,}$/, 'must be a Slack channel id such as C0123ABCD (not a #name)');

/** Owners as written (entries may be comma-separated lists), one name each, deduplicated. */
function ownersList(list: readonly string[]): string[] {
  return [...new Set(list.flatMap((o) => o.split(',')).map((o) => o.trim()).filter((o) => o !== ''))].slice(0, 100);
}

const pipeline = z
  .object({
    name: name('pipeline name'),
    channel: channelId,
    releaseIdAnnotation: z.string().min(1).default('hangar.io/release-id'),
    stallAfterMinutes: z.number().positive().optional(),
    /**
     * Whose app this is: Kubernetes users and groups (as the identity map names people). The App
     * Home lists a person's own pipelines first. Entries may hold several, comma-separated (a
     * template fills them from an annotation); empty ones are dropped.
     */
    owners: z.array(z.string().max(2_000)).max(50).transform(ownersList).optional(),
    /** `false`: no release timeline image in this pipeline's threads when a release completes or fails (absent: drawn). */
    charts: z.boolean().optional(),
    stages: z.array(stage).min(1),
  })
  .strict();

const settings = z
  .object({
    stallAfterMinutes: z.number().positive().default(20),
    /** How long a finished release stays readable. */
    finishedReleaseTtlHours: z.number().positive().default(168),
    /** Degraded or Unknown for longer than this after being healthy is reported. */
    unhealthyGraceMinutes: z.number().nonnegative().default(2),
    /** An Argo CD sync Running this long with a paused Rollout and a running hook is reported as hook-pinned. */
    hookPinnedAfterMinutes: z.number().positive().default(10),
    /** A target not heard from for this long no longer counts as part of its stage. */
    forgetTargetAfterMinutes: z.number().positive().default(60),
    /** Watch source: a replica that stops renewing its lease of a cluster is replaced after this long. */
    watchLeaseSeconds: z.number().int().min(2).max(300).default(15),
    /** Watch source: list again this often; each list is a heartbeat of every tracked object. */
    watchResyncMinutes: z.number().positive().max(60).default(10),
    /**
     * Watch source: warn when one cluster's watches list again (410, a failure, a resync) more
     * than `count` times within `minutes` (a 410 loop, a flapping API server): at most once per window.
     */
    watchRelistWarn: z
      .object({ count: z.number().int().min(1).default(10), minutes: z.number().positive().max(60).default(5) })
      .strict()
      .prefault({}),
    /** Longest line a cluster's watch stream may send (MiB); a longer one ends that watch with a line-too-long error. */
    watchMaxLineMiB: z.number().int().min(1).max(256).default(16),
    /** Bytes read from one watch stream (MiB) before it is ended and resumed from the last resourceVersion. */
    watchMaxStreamMiB: z.number().int().min(1).max(16_384).default(512),
    /** Watch source: the Argo CD Applications watched for Rollout stages (as the notification subscription selects them). */
    watchApplicationSelector: labelSelector.prefault('hangar.io/release-tracked=true'),
    /** A release that never finishes (announced only, Failed, stuck) is forgotten this long after it was last heard from. */
    unfinishedReleaseTtlDays: z.number().positive().max(3650).default(30),
    /** Hosts a CI announcement's pullRequestUrl may point at (https only); empty: no links accepted. */
    pullRequestHosts: z
      .array(z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(:\d{1,5})?$/, 'must be a lowercase host name such as github.com'))
      .default([]),
    /**
     * `freshness --refresh` and Refresh-and-approve ask Argo CD again while a child stays stale
     * (argo-cd#29347: a refresh asked once can do nothing): `rounds` in all, the wait between two
     * rounds starting at `backoffSeconds` and doubling up to `maxBackoffSeconds`.
     */
    freshnessRefresh: z
      .object({
        rounds: z.number().int().min(1).max(10).default(4),
        backoffSeconds: z.number().positive().max(300).default(2),
        maxBackoffSeconds: z.number().positive().max(600).default(30),
      })
      .strict()
      .prefault({}),
    /** The audit stream keeps about this many entries (XADD MAXLEN ~). */
    auditMaxEntries: z.number().int().min(1_000).default(100_000),
    /** Denied attempts audited per person per minute; the rest are counted in glidepath_audit_denied_dropped_total. */
    auditDeniedPerUserPerMinute: z.number().int().min(1).default(10),
  })
  .strict();

export const configFileSchema = z
  .object({
    settings: settings.prefault({}),
    clusters: z.array(cluster).min(1),
    pipelines: z.array(pipeline).default([]),
    identities: identitiesSchema.prefault({}),
    /** Freeze windows of our own (src/config/freezes.ts); the freeze gate holds actions in them. */
    freezes: freezesSchema,
    /** One pipeline per app: src/config/templates.ts. */
    pipelineTemplates: z.array(pipelineTemplateSchema({ labelSelector, name, channel: channelId })).default([]),
  })
  .strict()
  .superRefine((cfg, ctx) => {
    const clusterNames = new Set<string>();
    cfg.clusters.forEach((c, i) => {
      if (clusterNames.has(c.name)) {
        ctx.addIssue({ code: 'custom', path: ['clusters', i, 'name'], message: `duplicate cluster "${c.name}"` });
      }
      clusterNames.add(c.name);
    });
    const pipelineNames = new Set<string>();
    cfg.pipelines.forEach((p, i) => {
      if (pipelineNames.has(p.name)) {
        ctx.addIssue({ code: 'custom', path: ['pipelines', i, 'name'], message: `duplicate pipeline "${p.name}"` });
      }
      pipelineNames.add(p.name);
      const stageNames = new Set<string>();
      p.stages.forEach((s, j) => {
        if (stageNames.has(s.name)) {
          ctx.addIssue({ code: 'custom', path: ['pipelines', i, 'stages', j, 'name'], message: `duplicate stage "${s.name}"` });
        }
        stageNames.add(s.name);
        if (!clusterNames.has(s.cluster)) {
          ctx.addIssue({
            code: 'custom',
            path: ['pipelines', i, 'stages', j, 'cluster'],
            message: unknownCluster(s.cluster, clusterNames),
          });
        }
      });
    });
    checkTemplates(cfg, clusterNames, ctx);
  });

/** Each template filled with sample values must be a valid pipeline on known clusters; problems by the template's own paths. */
function checkTemplates(cfg: { pipelineTemplates: readonly PipelineTemplate[] }, clusterNames: ReadonlySet<string>, ctx: z.RefinementCtx): void {
  const templateNames = new Set<string>();
  cfg.pipelineTemplates.forEach((t, i) => {
    const at = (...path: PropertyKey[]) => ['pipelineTemplates', i, ...path];
    if (templateNames.has(t.name)) ctx.addIssue({ code: 'custom', path: at('name'), message: `duplicate template "${t.name}"` });
    templateNames.add(t.name);
    t.generator.clusters.forEach((c, j) => {
      if (!clusterNames.has(c)) ctx.addIssue({ code: 'custom', path: at('generator', 'clusters', j), message: unknownCluster(c, clusterNames) });
    });
    const filled = instantiateTemplate(t, sampleBindings(t.generator.clusters[0] ?? 'sample'), t.channel);
    if ('problems' in filled) {
      for (const issue of filled.problems) ctx.addIssue({ code: 'custom', path: at(...issue.path), message: `${issue.message} (with placeholders filled by sample values)` });
      return;
    }
    filled.pipeline.stages.forEach((s, j) => {
      if (!clusterNames.has(s.cluster)) ctx.addIssue({ code: 'custom', path: at('stages', j, 'cluster'), message: unknownCluster(s.cluster, clusterNames) });
    });
  });
}

export type PipelineTemplate = z.infer<ReturnType<typeof pipelineTemplateSchema>>;

/**
 * A template filled for one group: the pipeline it generates, parsed as a pipeline of the file
 * is, or the problems by path (a label value that makes no valid name, a selector that fails).
 */
export function instantiateTemplate(t: PipelineTemplate, b: TemplateBindings, channel: string): { pipeline: PipelineConfig } | { problems: { path: PropertyKey[]; message: string }[] } {
  const result = pipeline.safeParse({
    name: fillText(t.name, b),
    channel,
    releaseIdAnnotation: fillText(t.releaseIdAnnotation, b),
    ...(t.stallAfterMinutes !== undefined ? { stallAfterMinutes: t.stallAfterMinutes } : {}),
    owners: t.owners.map((o) => fillText(o, b)),
    ...(t.charts !== undefined ? { charts: t.charts } : {}),
    stages: fillDeep(t.stages, b),
  });
  if (result.success) return { pipeline: result.data };
  return { problems: result.error.issues.map((issue) => ({ path: issue.path, message: issue.message })) };
}

export type ConfigFile = z.infer<typeof configFileSchema>;
export type PipelineConfig = ConfigFile['pipelines'][number];
export type StageConfig = PipelineConfig['stages'][number];
export type ClusterConfig = ConfigFile['clusters'][number];
export type Permissions = z.infer<typeof permissions>;

/** Parses YAML text; every YAML and schema problem is reported, with paths. */
export function parseConfigFile(text: string, source = 'config'): ConfigFile {
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    // The first line of a pretty error ends with "at line L, column C:" and the excerpt follows; name the line's text instead.
    const lines = text.split(/\r?\n/);
    throw new ConfigError(
      source,
      doc.errors.map((e) => {
        const summary = (e.message.split('\n')[0] ?? '').replace(/:\s*$/, '');
        const line = e.linePos?.[0]?.line;
        const offending = line !== undefined ? lines[line - 1] : undefined;
        return offending !== undefined ? `YAML: ${summary}: ${JSON.stringify(offending.slice(0, 200))}` : `YAML: ${summary}`;
      }),
    );
  }
  const result = configFileSchema.safeParse(doc.toJS() ?? {});
  if (!result.success) throw new ConfigError(source, formatIssues(result.error));
  return result.data;
}

/** `variable`: the environment variable that named the file, so a missing file says where the path came from. */
export function loadConfigFile(path: string, variable?: string): ConfigFile {
  return parseConfigFile(readConfigSource(path, variable).text, path);
}

/**
 * The config start-up reads: the file GLIDEPATH_CONFIG names. One home for the bot, its
 * subcommands (prune-notified, check) and their messages.
 */
export function configFromEnv(env: Pick<Env, 'GLIDEPATH_CONFIG'>): ConfigFile {
  return startupConfig(env).config;
}

/** The config start-up reads, with the file it came from and its hash (what a reload compares and shows). */
export function startupConfig(env: Pick<Env, 'GLIDEPATH_CONFIG'>): { config: ConfigFile; path: string; hash: string } {
  if (!env.GLIDEPATH_CONFIG) throw new ConfigError('environment', ['GLIDEPATH_CONFIG: set it to the path of the YAML config (see deploy/config.example.yaml)']);
  const path = env.GLIDEPATH_CONFIG;
  const { text, hash } = readConfigSource(path, 'GLIDEPATH_CONFIG');
  return { config: parseConfigFile(text, path), path, hash };
}
