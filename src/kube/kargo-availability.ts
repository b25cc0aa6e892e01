/**
 * Whether a Stage may take a piece of Freight, by Kargo's own rule (`Stage.IsFreightAvailable` in
 * akuity/kargo's api/v1alpha1): approved for the Stage, or requested from its Warehouse with either direct
 * sources or verification (and soak) in the upstream Stages, all or one of them. Pure; every
 * answer carries the reason a person is shown.
 */
import { humanDuration } from './freshness.js';
import { freightDisplayName, type Freight } from '../model/kargo-freight.js';
import type { Stage } from '../model/kargo-stage.js';

export interface Availability {
  available: boolean;
  reason: string;
}

/** Go duration strings as Kargo writes them: `1h30m`, `90s`, `1.5h`. */
export function goDurationMs(text: string | undefined): number {
  if (!text) return 0;
  let total = 0;
  for (const m of text.matchAll(/([0-9]+(?:\.[0-9]+)?)(ms|h|m|s)/g)) {
    total += Number(m[1]) * { ms: 1, h: 3_600_000, m: 60_000, s: 1000 }[m[2] as 'ms' | 'h' | 'm' | 's'];
  }
  return total;
}

function soakedMs(freight: Freight, stage: string, now: number): number | undefined {
  if (!freight.status?.verifiedIn?.[stage]) return undefined;
  const since = Date.parse(freight.status?.currentlyIn?.[stage]?.since ?? '');
  const current = Number.isNaN(since) ? 0 : now - since;
  return Math.max(current, goDurationMs(freight.status.verifiedIn[stage]!.longestSoak));
}

function upstreamVerdict(freight: Freight, upstream: string, soakMs: number, now: number): { ok: boolean; why: string } {
  const soaked = soakedMs(freight, upstream, now);
  if (soaked === undefined) return { ok: false, why: `not verified in ${upstream}` };
  if (soaked < soakMs) return { ok: false, why: `verified in ${upstream} but soaked ${humanDuration(soaked)} of the required ${humanDuration(soakMs)}` };
  return { ok: true, why: `verified in ${upstream}` };
}

/** The Freight as people read it everywhere (freightDisplayName), for a Freight object read from the cluster. */
export function freightLabel(freight: Freight): string {
  return freightDisplayName({ name: freight.metadata.name, alias: freight.alias });
}

export function freightAvailability(stage: Stage, freight: Freight, now: number): Availability {
  const name = stage.metadata.name;
  if (freight.status?.approvedFor?.[name]) return { available: true, reason: `manually approved for ${name}` };
  const origin = freight.origin;
  const requests = (stage.spec?.requestedFreight ?? []).filter((r) => r.origin.kind === origin?.kind && r.origin.name === origin?.name);
  if (requests.length === 0) {
    return { available: false, reason: `Stage ${name} does not request Freight from ${origin ? `${origin.kind} ${origin.name}` : 'its origin'}` };
  }
  const refusals: string[] = [];
  for (const request of requests) {
    const sources: Partial<NonNullable<typeof request.sources>> = request.sources ?? {};
    if (sources.direct) return { available: true, reason: `comes directly from ${request.origin.kind} ${request.origin.name}` };
    const upstream = sources.stages ?? [];
    if (upstream.length === 0) {
      refusals.push('no upstream Stage and no direct source');
      continue;
    }
    const soak = goDurationMs(sources.requiredSoakTime);
    const verdicts = upstream.map((u) => upstreamVerdict(freight, u, soak, now));
    if (sources.availabilityStrategy === 'All') {
      if (verdicts.every((v) => v.ok)) return { available: true, reason: `verified in ${upstream.join(', ')}` };
      refusals.push(`needs all of ${upstream.join(', ')}: ${verdicts.filter((v) => !v.ok).map((v) => v.why).join(', ')}`);
    } else {
      const ok = verdicts.find((v) => v.ok);
      if (ok) return { available: true, reason: ok.why };
      refusals.push(upstream.length === 1 ? verdicts[0]!.why : `needs one of ${upstream.join(', ')}: ${verdicts.map((v) => v.why).join(', ')}`);
    }
  }
  return { available: false, reason: refusals.join('; ') };
}
