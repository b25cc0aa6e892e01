/**
 * A V8 CPU profile of part of a bench run (node:inspector, in this process), written to
 * <dir>/<name>.cpuprofile for a viewer, and per kind of fact the functions that took the most CPU
 * while a fact of that kind was being processed (samples inside the windows `time` marks: one
 * fact at a time, the windows do not overlap), self and total time per fact. Used by
 * bench:kinds (BENCH_KINDS_CPU_PROF, one profile per stream) and bench:curve (BENCH_CURVE_PROFILE,
 * one per point's measured facts). Off by default: profiling slows the run.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** µs on the clock V8's profiler stamps samples with (uv_hrtime). */
const nowUs = (): number => Number(process.hrtime.bigint() / 1000n);

export class FactProfiler {
  private readonly session = new Session();
  private windows: { kind: string; from: number; to: number }[] = [];

  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true });
    this.session.connect();
  }

  async start(): Promise<void> {
    this.windows = [];
    await this.session.post('Profiler.enable');
    await this.session.post('Profiler.setSamplingInterval', { interval: 100 });
    await this.session.post('Profiler.start');
  }

  /** Times one fact of `kind`. */
  async time<T>(kind: string, fn: () => Promise<T>): Promise<T> {
    const from = nowUs();
    try {
      return await fn();
    } finally {
      this.windows.push({ kind, from, to: nowUs() });
    }
  }

  /** Stops, writes the profile as `name`, and says per kind the top functions by self and total CPU per fact. */
  async stop(name: string, top = 8): Promise<Record<string, { samplesMsPerFact: number; self: [string, number][]; total: [string, number][] }>> {
    const { profile } = (await this.session.post('Profiler.stop')) as unknown as { profile: Profile };
    await this.session.post('Profiler.disable');
    writeFileSync(join(this.dir, `${name}.cpuprofile`), JSON.stringify(profile));
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const label = (n: ProfileNode): string => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*\/(src|bench|node_modules)\//, '$1/')}:${n.callFrame.lineNumber + 1}`;
    const windows = [...this.windows].sort((a, b) => a.from - b.from);
    const facts = new Map<string, number>();
    for (const w of windows) facts.set(w.kind, (facts.get(w.kind) ?? 0) + 1);
    const self = new Map<string, Map<string, number>>();
    const total = new Map<string, Map<string, number>>();
    const sampled = new Map<string, number>();
    let t = profile.startTime;
    let w = 0;
    for (let i = 0; i < profile.samples.length; i++) {
      const dt = profile.timeDeltas[i] ?? 0;
      t += dt;
      while (w < windows.length && windows[w]!.to < t) w++;
      const win = windows[w];
      if (!win || win.from > t) continue;
      const node = byId.get(profile.samples[i]!)!;
      if (node.callFrame.functionName === '(idle)') continue;
      const ms = dt / 1000;
      sampled.set(win.kind, (sampled.get(win.kind) ?? 0) + ms);
      const s = self.get(win.kind) ?? new Map<string, number>();
      s.set(label(node), (s.get(label(node)) ?? 0) + ms);
      self.set(win.kind, s);
      const tot = total.get(win.kind) ?? new Map<string, number>();
      const seen = new Set<string>();
      for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
        const l = label(byId.get(id)!);
        if (seen.has(l)) continue;
        seen.add(l);
        tot.set(l, (tot.get(l) ?? 0) + ms);
      }
      total.set(win.kind, tot);
    }
    const out: Record<string, { samplesMsPerFact: number; self: [string, number][]; total: [string, number][] }> = {};
    const best = (m: Map<string, number> | undefined, n: number, count = top): [string, number][] =>
      [...(m ?? new Map<string, number>()).entries()]
        .filter(([l]) => !/^\((root|program|anonymous)\)/.test(l))
        .sort((a, b) => b[1] - a[1])
        .slice(0, count)
        .map(([l, ms]) => [l, Math.round((ms / n) * 1000) / 1000]);
    for (const [kind, n] of facts) {
      out[kind] = { samplesMsPerFact: Math.round(((sampled.get(kind) ?? 0) / n) * 1000) / 1000, self: best(self.get(kind), n), total: best(total.get(kind), n) };
      // The longer tables, for reading beside the profile.
      writeFileSync(join(this.dir, `${name}.${kind}.json`), JSON.stringify({ self: best(self.get(kind), n, 60), total: best(total.get(kind), n, 120) }, null, 1));
    }
    return out;
  }
}
