/**
 * The freeze gate (docs/actions.md), between permission and freshness. An action is held while
 *
 * - a config freeze (`freezes:`, src/config/freezes.ts) covering the stage is open, for an approve
 *   or a promote (never an abort, which is what a freeze wants possible; nor a refresh, which
 *   deploys nothing): refused with
 *   when it ends, unless a person in every open freeze's `breakGlass.groups` overrides with a
 *   reason (`--break-glass "why"`), which is audited and announced in the thread; or
 * - an Argo CD syncWindow of the AppProject of an Application the write syncs or refreshes holds
 *   a manual sync (src/policy/sync-windows.ts). Glidepath's break-glass cannot override that:
 *   Argo CD itself would refuse the sync; the window's `manualSync: true` is the way.
 *
 * No freeze and no window applying: no decision (the audit entry lists only gates that spoke).
 */
import type { FreezeConfig } from '../config/freezes.js';
import { getTyped } from '../kube/reads.js';
import { APP_PROJECTS } from '../kube/resources.js';
import { KubeActionError } from '../kube/errors.js';
import { doublestarToRegExp } from '../model/kargo-name-pattern.js';
import { formatInZone, openUntil, parseGoDuration, parseLocalTime, validTimeZone, type TimeWindow } from '../time/windows.js';
import { appProjectSchema, canSyncManually, windowApplies, type AppProject } from '../policy/sync-windows.js';
import { untrusted } from '../text/mrkdwn.js';
import type { ActionReads } from './reads.js';
import type { ActionContext, ActionRequest, GateDecision } from './types.js';

export type FreezeDecision = Extract<GateDecision, { gate: 'freeze' }>;

function selects(patterns: readonly string[] | undefined, name: string): boolean {
  if (!patterns) return true;
  return patterns.some((p) => (p.startsWith('glob:') ? doublestarToRegExp(p.slice('glob:'.length)).test(name) : p === name));
}

function windowOf(f: FreezeConfig): TimeWindow {
  if (f.schedule !== undefined) return { kind: 'cron', schedule: f.schedule, durationMs: parseGoDuration(f.duration!)!, timeZone: f.timeZone };
  return { kind: 'span', start: parseLocalTime(f.start!, f.timeZone)!, end: parseLocalTime(f.end!, f.timeZone)! };
}

export interface OpenFreeze {
  freeze: FreezeConfig;
  until: number;
}

/** The config freezes open on a stage at `now` (also what the parent message shows). */
export function openFreezes(freezes: readonly FreezeConfig[], where: { pipeline: string; stage: string }, now: number): OpenFreeze[] {
  const open: OpenFreeze[] = [];
  for (const freeze of freezes) {
    if (!selects(freeze.pipelines, where.pipeline) || !selects(freeze.stages, where.stage)) continue;
    const until = openUntil(windowOf(freeze), now);
    if (until !== undefined) open.push({ freeze, until });
  }
  return open;
}

/** "frozen until 16:00 Europe/Berlin by freeze 'black-friday': no deploys on Black Friday". */
export function frozenText(open: OpenFreeze, now: number): string {
  return `frozen until ${formatInZone(open.until, open.freeze.timeZone, now)} by freeze '${open.freeze.name}': ${open.freeze.reason}`;
}

/** The parent message's line for each stage of a pipeline an open freeze holds at `now` (src/slack/render/parent.ts). */
export function frozenStageLines(freezes: readonly FreezeConfig[], pipeline: { name: string; stages: readonly { name: string }[] }, now: number): Map<string, string> {
  const lines = new Map<string, string>();
  if (freezes.length === 0) return lines;
  for (const stage of pipeline.stages) {
    const open = openFreezes(freezes, { pipeline: pipeline.name, stage: stage.name }, now);
    if (open.length > 0) lines.set(stage.name, open.map((o) => frozenText(o, now)).join('; '));
  }
  return lines;
}

async function isIn(ctx: ActionContext, principals: readonly string[]): Promise<boolean> {
  if (principals.includes(ctx.user.id)) return true;
  for (const group of principals.filter((p) => p.startsWith('S'))) if (await ctx.groups.isMember(group, ctx.user.id)) return true;
  return false;
}

/** The command that overrides, for this request (a click has no flags: the person types it). */
function overrideCommand(request: ActionRequest): string {
  const { intent, where } = request;
  const target = intent.action === 'promote' ? `${where.pipeline.name}@${where.stage.name}` : intent.target;
  return `/glidepath ${intent.action} ${target} --break-glass "why"`;
}

async function configFreeze(ctx: ActionContext, request: ActionRequest, now: number): Promise<FreezeDecision | undefined> {
  // A refresh deploys nothing: only Argo CD's windows concern it.
  if (request.intent.action !== 'approve' && request.intent.action !== 'promote') return undefined;
  const open = openFreezes(ctx.config.freezes, { pipeline: request.where.pipeline.name, stage: request.where.stage.name }, now);
  if (open.length === 0) return undefined;
  const frozen = open.map((o) => frozenText(o, now)).join('; ');
  const until = Math.max(...open.map((o) => o.until));
  const wanted = request.intent.describe;
  if (!request.breakGlass) {
    const who = [...new Set(open.flatMap((o) => o.freeze.breakGlass?.groups ?? []))];
    const how = who.length > 0 && open.every((o) => o.freeze.breakGlass) ? `; in an emergency ${who.join(', ')} may override with \`${overrideCommand(request)}\`` : '; nobody may override it (no breakGlass in the freeze)';
    return { gate: 'freeze', allowed: false, until, reason: `${frozen}${how}` };
  }
  const reason = request.reason?.trim();
  if (!reason) return { gate: 'freeze', allowed: false, until, reason: `${frozen}; a break-glass override needs a reason: \`${overrideCommand(request)}\`` };
  for (const o of open) {
    const groups = o.freeze.breakGlass?.groups ?? [];
    if (!(await isIn(ctx, groups))) {
      const allowed = groups.length > 0 ? `only ${groups.join(', ')} may override freeze '${o.freeze.name}'` : `nobody may override freeze '${o.freeze.name}' (it has no breakGlass)`;
      return { gate: 'freeze', allowed: false, until, reason: `${frozen}; ${allowed}, so the break-glass to ${wanted} was refused` };
    }
  }
  const names = open.map((o) => o.freeze.name);
  return { gate: 'freeze', allowed: true, via: `break-glass by ${ctx.user.id}`, overridden: { by: ctx.user.id, reason, freezes: names } };
}

/** The AppProjects live in Argo CD's own namespace (the cluster's first argocdNamespaces entry). */
async function projectOf(ctx: ActionContext, cluster: string, name: string, cache: Map<string, Promise<AppProject | undefined>>): Promise<AppProject | undefined> {
  let found = cache.get(name);
  if (!found) {
    const namespace = ctx.config.clusters.find((c) => c.name === cluster)?.argocdNamespaces[0] ?? 'argocd';
    found = getTyped(ctx.clusters.api(cluster), APP_PROJECTS, appProjectSchema, namespace, name).catch((err: unknown) => {
      // No such AppProject: Argo CD refuses the sync on its own, and names the project.
      if (err instanceof KubeActionError && err.kind === 'not-found') return undefined;
      throw err;
    });
    cache.set(name, found);
  }
  return found;
}

async function syncWindows(ctx: ActionContext, request: ActionRequest, reads: ActionReads, now: number): Promise<FreezeDecision | undefined> {
  const { intent } = request;
  if (!intent.syncs) return undefined;
  const apps = await intent.syncs(reads);
  const cache = new Map<string, Promise<AppProject | undefined>>();
  let applied = 0;
  for (const app of apps) {
    const projectName = app.project || 'default';
    const project = await projectOf(ctx, intent.cluster, projectName, cache);
    const windows = (project?.spec?.syncWindows ?? []).filter((w) => windowApplies(w, app));
    if (windows.length === 0) continue;
    applied++;
    const verdict = canSyncManually(windows, now);
    if (verdict.allowed) continue;
    const at = `AppProject ${untrusted(projectName, 253, { oneLine: true })} holds a sync of ${untrusted(app.name, 253, { oneLine: true })}`;
    if (verdict.why === 'invalid') return { gate: 'freeze', allowed: false, reason: `${at}: a sync window cannot be read (${verdict.problem}), and Argo CD refuses every sync then; fix the AppProject's syncWindows` };
    const said = verdict.windows.map((w) => `\`${untrusted(w.schedule ?? '', 100, { oneLine: true })}\` for ${untrusted(w.duration ?? '', 40)}${w.timeZone ? ` ${untrusted(w.timeZone, 64)}` : ''}${w.description ? ` (${untrusted(w.description, 200, { oneLine: true })})` : ''}`).join(', ');
    // Argo CD reads a time zone it does not know as UTC; so does the answer.
    const named = verdict.windows[0]?.timeZone;
    const tz = named && validTimeZone(named) ? named : 'UTC';
    if (verdict.why === 'deny') return { gate: 'freeze', allowed: false, until: verdict.until, reason: `${at}: deny sync window ${said} is open until ${formatInZone(verdict.until, tz, now)}; Argo CD would refuse the sync. Wait, or ask the platform team to set manualSync: true on the window` };
    return { gate: 'freeze', allowed: false, until: verdict.opens, reason: `${at}: syncs are allowed only in its allow windows (${said}), the next opens at ${formatInZone(verdict.opens, tz, now)}; Argo CD would refuse the sync` };
  }
  return applied > 0 ? { gate: 'freeze', allowed: true, via: `the sync windows of ${applied} Application${applied === 1 ? '' : 's'} allow a manual sync now` } : undefined;
}

/** The gate: Argo CD's windows first (no override here can pass them), then the config's freezes. */
export async function freezeGate(ctx: ActionContext, request: ActionRequest, reads: ActionReads): Promise<FreezeDecision | undefined> {
  if (request.intent.action === 'abort') return undefined;
  const now = (ctx.now ?? Date.now)();
  const byArgo = await syncWindows(ctx, request, reads, now);
  if (byArgo && !byArgo.allowed) return byArgo;
  return (await configFreeze(ctx, request, now)) ?? byArgo;
}
