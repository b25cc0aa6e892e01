/**
 * Reads freshness from a cluster, asks Argo CD to refresh stale children, and waits for them on
 * a WATCH (resumed from the LIST's resourceVersion; nothing is polled). The ApplicationSet is
 * re-read only when the children alone say "fresh", or when a child waits on the ApplicationSet's
 * own status (its entry or targetRevisions), at most once per `appSetRecheckMs`.
 */
import type { KubeApi } from './api.js';
import { KubeActionError } from './errors.js';
import { humanDuration, judgeChild, judgeChildren, judgeFreshness, latestTransition, REFRESH_ANNOTATION, childrenOf, type ChildFreshness, type FreshnessReport } from './freshness.js';
import { getApplicationSet, listApplicationCores } from './reads.js';
import { APPLICATIONS } from './resources.js';
import { applicationCoreSchema, type ApplicationCore as Application } from '../model/application.js';
import { backoffAfter, DEFAULT_REFRESH_ROUNDS, type RefreshRounds } from './refresh-rounds.js';
import type { ApplicationSet, ApplicationStatusEntry } from '../model/application-set.js';

export interface FreshnessSnapshot {
  appSet: ApplicationSet;
  children: Application[];
  /** The Applications LIST's resourceVersion: where a watch resumes. */
  resourceVersion: string;
  report: FreshnessReport;
}

export interface FreshnessOptions {
  now?: () => number;
}

export async function checkFreshness(api: KubeApi, namespace: string, appSetName: string, options: FreshnessOptions & { pageSize?: number } = {}): Promise<FreshnessSnapshot> {
  // The ApplicationSet first would be as good; together they cost one round trip less.
  const [setResult, appsResult] = await Promise.allSettled([getApplicationSet(api, namespace, appSetName), listApplicationCores(api, namespace, { limit: options.pageSize })]);
  if (setResult.status === 'rejected') throw setResult.reason;
  if (appsResult.status === 'rejected') throw appsResult.reason;
  const appSet = setResult.value;
  const apps = appsResult.value;
  const children = childrenOf(appSet, apps.items);
  const report = judgeChildren(appSet, children, (options.now ?? Date.now)());
  return { appSet, children, resourceVersion: apps.resourceVersion, report };
}

/** Runs `work` over `items` with at most `limit` in flight; every item is attempted. */
export async function boundedEach<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<PromiseSettledResult<void>[]> {
  const results: PromiseSettledResult<void>[] = new Array(items.length);
  let next = 0;
  const runner = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      try {
        await work(items[i]!);
        results[i] = { status: 'fulfilled', value: undefined };
      } catch (reason) {
        results[i] = { status: 'rejected', reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, runner));
  return results;
}

export interface RefreshResult {
  requested: string[];
  failed: { name: string; error: unknown }[];
}

/** `argocd.argoproj.io/refresh: normal` on each stale child (merge patch, bounded concurrency). */
export async function refreshStale(api: KubeApi, namespace: string, stale: readonly Pick<ChildFreshness, 'name'>[], options: { concurrency?: number } = {}): Promise<RefreshResult> {
  const names = stale.map((s) => s.name);
  const results = await boundedEach(names, options.concurrency ?? 16, async (name) => {
    await api.patch(APPLICATIONS, namespace, name, { metadata: { annotations: { [REFRESH_ANNOTATION]: 'normal' } } });
  });
  // A child deleted in the meantime needs no refresh.
  const gone = (r: PromiseSettledResult<void>): boolean => r.status === 'rejected' && r.reason instanceof KubeActionError && r.reason.kind === 'not-found';
  const failed = results.flatMap((r, i) => (r.status === 'rejected' && !gone(r) ? [{ name: names[i]!, error: r.reason }] : []));
  return { requested: names.filter((_, i) => results[i]!.status === 'fulfilled'), failed };
}

export interface FreshnessProgress {
  fresh: number;
  total: number;
  /** "31/40 fresh" */
  text: string;
}

export interface WaitFreshOptions extends FreshnessOptions {
  timeoutMs: number;
  /** Called whenever the number of fresh children changes. */
  onProgress?: (progress: FreshnessProgress) => void;
  appSetRecheckMs?: number;
  /**
   * Ask again, in rounds (refresh-rounds.ts), for children that stay stale once their request was
   * taken, or that turn stale while waiting (a step transition leaves the others behind the latest
   * one). `refreshed`: the names refreshStale asked for, round 1 (none: no round yet).
   */
  refreshAgain?: { refreshed: readonly string[]; concurrency?: number; rounds?: RefreshRounds };
}

export interface WaitFreshResult {
  report: FreshnessReport;
  timedOut: boolean;
  /** Every round was asked and the children still stale had all taken their last request: asking more would not help. */
  gaveUp: boolean;
  /** Rounds of refresh requests asked, the first one included. */
  rounds: number;
  /** Children refreshed again while waiting (rounds 2 and later). */
  refreshedAgain: string[];
}

/**
 * Waits until every child is fresh or the timeout passes, from a snapshot taken by checkFreshness.
 * Each watch event re-judges only the child it carries, so thousands of children cost O(1) per event.
 */
export async function waitFresh(api: KubeApi, namespace: string, snapshot: FreshnessSnapshot, options: WaitFreshOptions): Promise<WaitFreshResult> {
  const now = options.now ?? Date.now;
  let appSet = snapshot.appSet;
  const children = new Map(snapshot.children.map((c) => [c.metadata.name, c]));
  const initial = judgeFreshness(appSet, [...children.values()], now());
  const asked = options.refreshAgain?.refreshed ?? [];
  if (initial.stale.length === 0) return { report: initial, timedOut: false, gaveUp: false, rounds: asked.length > 0 ? 1 : 0, refreshedAgain: [] };

  let entries = new Map<string, ApplicationStatusEntry>();
  let latest: string | undefined;
  let hasEntries = false;
  const verdicts = new Map<string, ChildFreshness>();
  let freshCount = 0;
  const useAppSet = (next: ApplicationSet): void => {
    appSet = next;
    const list = next.status?.applicationStatus ?? [];
    entries = new Map(list.map((e) => [e.application, e]));
    latest = latestTransition(list);
    hasEntries = list.length > 0;
  };
  const judgeOne = (app: Application): ChildFreshness => {
    const name = app.metadata.name;
    const before = verdicts.get(name);
    const verdict = judgeChild(app, entries.get(name), latest, hasEntries, now());
    verdicts.set(name, verdict);
    freshCount += (verdict.fresh ? 1 : 0) - (before?.fresh ? 1 : 0);
    return verdict;
  };
  const forget = (name: string): void => {
    if (verdicts.get(name)?.fresh) freshCount--;
    verdicts.delete(name);
  };
  // When Glidepath asked for a refresh (the annotation carries no time before Argo CD 3.6).
  const requestedAt = new Map<string, number>(asked.map((n) => [n, now()]));
  const report = (): FreshnessReport => {
    const r = judgeFreshness(appSet, [...children.values()], now());
    const withAge = (c: ChildFreshness): ChildFreshness =>
      c.reason === 'refresh pending' && requestedAt.has(c.name) ? { ...c, reason: `refresh pending for ${humanDuration(now() - requestedAt.get(c.name)!)}` } : c;
    return { ...r, children: r.children.map(withAge), stale: r.stale.map(withAge) };
  };

  const refreshedAgain: string[] = [];
  const refreshQueue: string[] = [];
  let refreshing = 0;
  const recheckMs = options.appSetRecheckMs ?? 1000;
  const policy = options.refreshAgain?.rounds ?? DEFAULT_REFRESH_ROUNDS;
  let round = asked.length > 0 ? 1 : 0;
  // Asked, and no event has shown the annotation yet: not a candidate for the next round.
  const awaitingAck = new Set(asked);

  return new Promise<WaitFreshResult>((resolve, reject) => {
    let settled = false;
    let lastFresh = -1;
    let recheckTimer: NodeJS.Timeout | undefined;
    let roundTimer: NodeJS.Timeout | undefined;
    let lastRecheck = 0;
    let recheckInFlight: Promise<void> | undefined;
    let roundBusy = false;
    let stopWatch: (() => void) | undefined;

    const finish = (timedOut: boolean, error?: unknown): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      if (recheckTimer) clearTimeout(recheckTimer);
      if (roundTimer) clearTimeout(roundTimer);
      stopWatch?.();
      if (error) reject(error);
      else resolve({ report: report(), timedOut, gaveUp, rounds: round, refreshedAgain });
    };
    let gaveUp = false;
    const deadline = setTimeout(() => finish(true), options.timeoutMs);

    const pumpRefreshes = (): void => {
      const limit = options.refreshAgain?.concurrency ?? 16;
      while (refreshing < limit && refreshQueue.length > 0 && !settled) {
        const name = refreshQueue.shift()!;
        refreshing++;
        refreshStale(api, namespace, [{ name }], { concurrency: 1 })
          .then((r) => {
            if (r.failed.length > 0) finish(false, r.failed[0]!.error);
          })
          .finally(() => {
            refreshing--;
            pumpRefreshes();
          });
      }
    };
    // A child whose last request was taken (or that was never asked) and is still stale.
    const candidate = (name: string, verdict: ChildFreshness | undefined): boolean =>
      verdict !== undefined && !verdict.fresh && !verdict.reason?.startsWith('refresh pending') && !awaitingAck.has(name);
    const candidates = (): string[] => [...verdicts].filter(([name, v]) => candidate(name, v)).map(([name]) => name);
    // A child stale only against the ApplicationSet's status (its entry, its targetRevisions) may be
    // waiting on a status newer than the one read: read it again before asking Argo CD again.
    const waitsOnAppSet = (name: string): boolean => {
      const reason = verdicts.get(name)?.reason ?? '';
      return reason.startsWith('revision') || reason.startsWith('not yet in');
    };
    const nextRound = async (): Promise<void> => {
      roundTimer = undefined;
      if (settled) return;
      if (candidates().some(waitsOnAppSet)) {
        roundBusy = true;
        await recheckAppSet().finally(() => (roundBusy = false));
        if (settled) return;
      }
      const names = candidates();
      if (names.length === 0) return;
      if (round >= policy.maxRounds) {
        // Asking more would not help when nobody's request is still on its way.
        if (names.length === verdicts.size - freshCount) {
          gaveUp = true;
          finish(false);
        }
        return;
      }
      round++;
      for (const name of names) {
        awaitingAck.add(name);
        refreshedAgain.push(name);
        requestedAt.set(name, now());
        refreshQueue.push(name);
      }
      pumpRefreshes();
    };
    const scheduleRound = (): void => {
      if (!options.refreshAgain || roundTimer || roundBusy || settled || candidates().length === 0) return;
      // The wait counts from the first child seen still stale: the others whose requests were taken
      // in the meantime join the same round.
      roundTimer = setTimeout(() => void nextRound(), round === 0 ? 0 : backoffAfter(policy, round));
    };
    const maybeRefresh = (verdict: ChildFreshness): void => {
      if (verdict.reason?.startsWith('refresh pending')) awaitingAck.delete(verdict.name);
      if (candidate(verdict.name, verdict)) scheduleRound();
    };
    const progress = (): void => {
      if (freshCount === lastFresh) return;
      lastFresh = freshCount;
      options.onProgress?.({ fresh: freshCount, total: verdicts.size, text: `${freshCount}/${verdicts.size} fresh` });
    };
    const judgeAll = (): void => {
      verdicts.clear();
      freshCount = 0;
      for (const app of children.values()) maybeRefresh(judgeOne(app));
      progress();
    };

    /** One read at a time; a caller during a read waits for that one. */
    const recheckAppSet = (): Promise<void> => {
      if (settled) return Promise.resolve();
      recheckInFlight ??= (async () => {
        lastRecheck = Date.now();
        try {
          useAppSet(await getApplicationSet(api, namespace, appSet.metadata.name));
          judgeAll();
          if (freshCount === verdicts.size) finish(false);
        } catch (err) {
          finish(false, err);
        } finally {
          recheckInFlight = undefined;
        }
      })();
      return recheckInFlight;
    };
    const scheduleRecheck = (): void => {
      if (recheckTimer || settled) return;
      const wait = Math.max(0, lastRecheck + recheckMs - Date.now());
      recheckTimer = setTimeout(() => {
        recheckTimer = undefined;
        void recheckAppSet();
      }, wait);
    };

    const onEvent = (type: string, object: unknown): void => {
      if (settled || (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED')) return;
      const parsed = applicationCoreSchema.safeParse(object);
      if (!parsed.success) return;
      const app = parsed.data;
      const name = app.metadata.name;
      if (type === 'DELETED') {
        children.delete(name);
        forget(name);
      } else if (childrenOf(appSet, [app]).length === 1) {
        children.set(name, app);
        const verdict = judgeOne(app);
        maybeRefresh(verdict);
        // A child waiting on the ApplicationSet's own status (its entry, its targetRevisions).
        if (!verdict.fresh && (verdict.reason?.startsWith('revision') || verdict.reason?.startsWith('not yet in'))) scheduleRecheck();
      } else if (children.has(name)) {
        children.delete(name);
        forget(name);
      } else return;
      progress();
      // The children agree; confirm against the ApplicationSet as it is now.
      if (freshCount === verdicts.size) void recheckAppSet();
    };

    // Resumes from the last version seen when the server ends the watch (as API servers do
    // every few minutes). When that version has been compacted away (410 Gone), LISTs again and
    // watches from the new list, as an informer does; any other error ends the wait.
    let lastVersion = snapshot.resourceVersion;
    const relist = async (): Promise<void> => {
      const again = await checkFreshness(api, namespace, appSet.metadata.name, { now });
      if (settled) return;
      children.clear();
      for (const c of again.children) children.set(c.metadata.name, c);
      useAppSet(again.appSet);
      lastVersion = again.resourceVersion;
      // The list is newer than every request asked so far.
      awaitingAck.clear();
      judgeAll();
      if (freshCount === verdicts.size) finish(false);
      else startWatch();
    };
    const startWatch = (): void => {
      api
        .watch(APPLICATIONS, namespace, { resourceVersion: lastVersion }, (type, object) => {
          const rv = (object as { metadata?: { resourceVersion?: unknown } } | null)?.metadata?.resourceVersion;
          if (typeof rv === 'string' && rv !== '' && type !== 'ERROR') lastVersion = rv;
          onEvent(type, object);
        })
        .then((handle) => {
          stopWatch = handle.stop;
          if (settled) handle.stop();
          handle.done.then(
            () => {
              if (!settled) startWatch();
            },
            (err: unknown) => {
              if (settled) return;
              if (err instanceof KubeActionError && err.status === 410) relist().catch((e: unknown) => finish(false, e));
              else finish(false, err);
            },
          );
        })
        .catch((err: unknown) => finish(false, err));
    };
    useAppSet(appSet);
    judgeAll();
    startWatch();
  });
}

/**
 * `freshness --refresh` and Refresh-and-approve: refresh the stale children of a snapshot (round 1),
 * then wait on the watch, asking again in rounds with backoff for children that stay stale or fall
 * behind a newer transition while waiting.
 */
export async function refreshAndWait(
  api: KubeApi,
  namespace: string,
  snapshot: FreshnessSnapshot,
  options: Omit<WaitFreshOptions, 'refreshAgain'> & { concurrency?: number; rounds?: RefreshRounds },
): Promise<WaitFreshResult & { refreshed: RefreshResult }> {
  const toRefresh = snapshot.report.stale.filter((c) => !c.reason?.startsWith('refresh pending'));
  const refreshed = await refreshStale(api, namespace, toRefresh, { concurrency: options.concurrency });
  if (refreshed.failed.length > 0) throw refreshed.failed[0]!.error;
  const waited = await waitFresh(api, namespace, snapshot, { ...options, refreshAgain: { refreshed: refreshed.requested, concurrency: options.concurrency, ...(options.rounds ? { rounds: options.rounds } : {}) } });
  return { ...waited, refreshed };
}
