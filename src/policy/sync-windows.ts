/**
 * Argo CD AppProject `spec.syncWindows`, judged for a manual sync as Argo CD judges it
 * (argo-cd pkg/apis/application/v1alpha1/types.go: `SyncWindows.Matches` then `CanSync(true)`):
 *
 * - A window applies to an Application when one of its `applications` globs matches the name, or
 *   a `clusters` glob the destination's name or server, or a `namespaces` glob the destination
 *   namespace (with `andOperator`, each list that is set must match). A window with no lists
 *   applies to nothing.
 * - An active deny window holds the sync unless every active deny window has `manualSync`.
 * - Otherwise an active allow window lets it through; allow windows that apply but are all closed
 *   hold it unless every one of them has `manualSync`. No window: through.
 *
 * Windows whose schedule or duration Argo CD cannot read hold the sync, as Argo CD's do.
 */
import { z } from 'zod';
import { ARGOPROJ, ident, objectMetaSchema, ofType } from '../model/meta.js';
import { nextOpening, openUntil, parseGoDuration, validCron, validTimeZone } from '../time/windows.js';

const syncWindowSchema = z.looseObject({
  kind: ident(16).nullish(),
  schedule: ident(200).nullish(),
  duration: ident(40).nullish(),
  applications: z.array(ident(253)).max(256).nullish(),
  namespaces: z.array(ident(253)).max(256).nullish(),
  clusters: z.array(ident(1024)).max(256).nullish(),
  manualSync: z.boolean().nullish(),
  timeZone: ident(64).nullish(),
  andOperator: z.boolean().nullish(),
  description: ident(500).nullish(),
});
export type SyncWindow = z.infer<typeof syncWindowSchema>;

export const appProjectSchema = ofType(
  { kind: 'AppProject', apiVersions: ARGOPROJ },
  z.looseObject({ metadata: objectMetaSchema, spec: z.looseObject({ syncWindows: z.array(syncWindowSchema).max(256).nullish() }).nullish() }),
);
export type AppProject = z.infer<typeof appProjectSchema>;

/** What of an Application a window is matched on. */
export interface WindowSubject {
  name: string;
  /** `spec.project`; unset or empty: `default`, as Argo CD reads it. */
  project?: string | null | undefined;
  destination?: { name?: string | undefined; server?: string | undefined; namespace?: string | undefined } | null | undefined;
}

/** gobwas/glob as Argo CD's `globMatch` calls it (no separators): `*` any run, `?` one character, `[…]`, `{a,b}`. */
export function argoGlob(pattern: string): RegExp {
  let out = '';
  let braces = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') out += '.*';
    else if (c === '?') out += '.';
    else if (c === '[') {
      const close = pattern.indexOf(']', i + 2);
      if (close === -1) return /(?!)/;
      const body = pattern.slice(i + 1, close).replace(/\\/g, '\\\\');
      out += body.startsWith('!') ? `[^${body.slice(1)}]` : `[${body}]`;
      i = close;
    } else if (c === '{') {
      braces++;
      out += '(?:';
    } else if (c === '}' && braces > 0) {
      braces--;
      out += ')';
    } else if (c === ',' && braces > 0) out += '|';
    else if (c === '\\' && i + 1 < pattern.length) out += `\\${pattern[++i]}`.replace(/^\\([a-zA-Z0-9])$/, '$1');
    else out += c.replace(/[.+^$()|\\/\]{}-]/g, '\\$&');
  }
  if (braces > 0) return /(?!)/;
  return new RegExp(`^${out}$`, 's');
}

const globMatch = (pattern: string, text: string | undefined): boolean => text !== undefined && text !== '' && argoGlob(pattern).test(text);

export function windowApplies(w: SyncWindow, app: WindowSubject): boolean {
  const dst = app.destination ?? {};
  const lists: (boolean | undefined)[] = [
    w.applications?.length ? w.applications.some((p) => globMatch(p, app.name)) : undefined,
    w.clusters?.length ? w.clusters.some((p) => globMatch(p, dst.name ?? undefined) || globMatch(p, dst.server ?? undefined)) : undefined,
    w.namespaces?.length ? w.namespaces.some((p) => globMatch(p, dst.namespace ?? undefined)) : undefined,
  ];
  const set = lists.filter((x): x is boolean => x !== undefined);
  if (set.length === 0) return false;
  return w.andOperator ? set.every(Boolean) : set.some(Boolean);
}

export type SyncWindowVerdict =
  | { allowed: true; via?: string }
  | { allowed: false; why: 'deny'; until: number; windows: SyncWindow[] }
  | { allowed: false; why: 'outside-allow'; opens: number; windows: SyncWindow[] }
  | { allowed: false; why: 'invalid'; problem: string };

function cronWindow(w: SyncWindow): { kind: 'cron'; schedule: string; durationMs: number; timeZone: string } | string {
  const durationMs = parseGoDuration(w.duration ?? '');
  if (!w.schedule || !validCron(w.schedule)) return `cannot parse schedule '${w.schedule ?? ''}'`;
  if (durationMs === undefined) return `cannot parse duration '${w.duration ?? ''}'`;
  // Argo CD reads an unknown time zone as UTC (with a warning in its log).
  const timeZone = w.timeZone && validTimeZone(w.timeZone) ? w.timeZone : 'UTC';
  return { kind: 'cron', schedule: w.schedule, durationMs, timeZone };
}

/** `CanSync(isManual: true)` over the windows that apply to one Application, at `now`. */
export function canSyncManually(windows: readonly SyncWindow[], now: number): SyncWindowVerdict {
  if (windows.length === 0) return { allowed: true };
  const open: { w: SyncWindow; until: number }[] = [];
  const closedAllows: { w: SyncWindow; opens: number }[] = [];
  for (const w of windows) {
    const window = cronWindow(w);
    if (typeof window === 'string') return { allowed: false, why: 'invalid', problem: window };
    const until = openUntil(window, now);
    if (until !== undefined) open.push({ w, until });
    else if (w.kind === 'allow') closedAllows.push({ w, opens: nextOpening(window, now) });
  }
  const denies = open.filter((o) => o.w.kind === 'deny');
  if (denies.length > 0) {
    if (denies.every((d) => d.w.manualSync)) return { allowed: true, via: 'the active deny windows allow manual syncs (manualSync: true)' };
    const blocking = denies.filter((d) => !d.w.manualSync);
    return { allowed: false, why: 'deny', until: Math.max(...blocking.map((d) => d.until)), windows: blocking.map((d) => d.w) };
  }
  if (open.some((o) => o.w.kind === 'allow')) return { allowed: true, via: 'an allow window is open' };
  if (closedAllows.length > 0) {
    if (closedAllows.every((c) => c.w.manualSync)) return { allowed: true, via: 'the closed allow windows allow manual syncs (manualSync: true)' };
    return { allowed: false, why: 'outside-allow', opens: Math.min(...closedAllows.map((c) => c.opens)), windows: closedAllows.map((c) => c.w) };
  }
  return { allowed: true };
}
