/**
 * An in-memory Git server for the Argo CD simulator: branches point at commits, and each commit
 * holds, per path, the Rollouts that path deploys. Just enough for "a commit lands on main, Argo CD
 * notices, syncs, and the Rollout starts a canary".
 */
import { createHash } from 'node:crypto';
import type { CanaryStep } from '../builders.js';

export interface DesiredRollout {
  name: string;
  image: string;
  replicas?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  steps?: CanaryStep[];
  trafficRouting?: boolean;
}

export interface DesiredManifests {
  rollouts: DesiredRollout[];
  /** A PostSync hook Job that only completes once the app's Rollouts are no longer paused. */
  postSyncHook?: boolean;
  /** Makes every sync of this path fail with this message (e.g. an admission webhook denial). */
  failSync?: string;
}

export class SimulatedGit {
  private readonly refs = new Map<string, string>();
  private readonly trees = new Map<string, Record<string, DesiredManifests>>();
  private counter = 0;

  /** Commits `files` (path → manifests, merged over the branch's current tree) and returns the sha. */
  commit(repoURL: string, branch: string, files: Record<string, DesiredManifests>): string {
    const parent = this.refs.get(`${repoURL}#${branch}`);
    const tree = { ...(parent ? this.trees.get(`${repoURL}@${parent}`) : {}), ...structuredClone(files) };
    const sha = createHash('sha1')
      .update(`${repoURL}\n${branch}\n${++this.counter}\n${JSON.stringify(tree)}`)
      .digest('hex');
    this.trees.set(`${repoURL}@${sha}`, tree);
    this.refs.set(`${repoURL}#${branch}`, sha);
    return sha;
  }

  /** A branch name, HEAD, or a known sha → sha. */
  resolve(repoURL: string, revision: string | undefined): string | undefined {
    const rev = revision === undefined || revision === '' || revision === 'HEAD' ? 'main' : revision;
    if (this.trees.has(`${repoURL}@${rev}`)) return rev;
    return this.refs.get(`${repoURL}#${rev}`);
  }

  manifests(repoURL: string, sha: string, path: string): DesiredManifests | undefined {
    return this.trees.get(`${repoURL}@${sha}`)?.[path];
  }
}
