/**
 * One action's cluster reads, each made once: the freeze gate (which Applications a RollingSync
 * step syncs, for their AppProjects' syncWindows) and the freshness gate judge the same read of
 * the ApplicationSet and its children, and the write is sent on it. Made anew for every act(), so
 * a Refresh-and-approve's approval reads again after its refresh.
 */
import type { KubeApi } from '../kube/api.js';
import { checkFreshness, type FreshnessSnapshot } from '../kube/freshness-reader.js';

export interface ActionReads {
  /** The ApplicationSet and its children, judged for freshness (docs/freshness.md). */
  freshness(namespace: string, appSet: string): Promise<FreshnessSnapshot>;
}

export function actionReads(api: KubeApi, now?: () => number): ActionReads {
  const snapshots = new Map<string, Promise<FreshnessSnapshot>>();
  return {
    freshness(namespace, appSet) {
      const key = `${namespace}/${appSet}`;
      let read = snapshots.get(key);
      if (!read) {
        read = checkFreshness(api, namespace, appSet, now ? { now } : {});
        // A read that failed is the action's failure; nothing later in it should reuse it, nor is there a later.
        snapshots.set(key, read);
      }
      return read;
    },
  };
}
