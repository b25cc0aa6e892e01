/**
 * Publishes the App Home tab (active releases and delivery figures per pipeline) when a user opens it. With an identity
 * map, the person's own apps (pipelines whose `owners` name their Kubernetes user or a group of
 * theirs) come first; a fleet's other pipelines are read only up to what the tab can show.
 */
import type { App } from '@slack/bolt';
import type { PipelineConfig } from '../../../config/file.js';
import { ownedBy } from '../../../routing/pipeline-origins.js';
import { renderHome } from '../../render/home.js';
import type { DeliveryWindows } from '../../../releases/store/delivery-stats.js';
import type { ListenerDeps, ListenerGroup } from '../types.js';

/** Releases shown per pipeline; the Home tab holds 100 blocks. */
const PER_PIPELINE = 10;
/** Pipelines read for one view: more than the tab's 100 blocks can show is wasted reads. */
const PIPELINES_READ = 40;
/** Pipelines shown with their delivery figures (the first ones: the person's own): 30 day reads each, and a few lines of the tab's text. */
const DELIVERY_SHOWN = 10;

/** The person's Kubernetes identity when the identity map knows them; undefined otherwise (all pipelines, config order). */
async function identityOf(deps: ListenerDeps, userId: string) {
  const identities = deps.commands?.services.identities;
  if (!identities) return undefined;
  try {
    const answer = await identities.resolve(userId);
    return answer.kind === 'mapped' ? answer.identity : undefined;
  } catch (err) {
    deps.logger.warn({ err: (err as Error).message, user: userId }, 'App Home: the identity map could not answer; showing every pipeline');
    return undefined;
  }
}

/** The delivery figures of the pipelines shown (30 day reads each, one round trip); none when they cannot be read: the releases still show. */
async function deliveryOf(deps: ListenerDeps, pipelines: readonly PipelineConfig[]): Promise<Map<string, DeliveryWindows> | undefined> {
  if (!deps.delivery) return undefined;
  try {
    return await deps.delivery.windowsOf(pipelines.map((p) => p.name), Date.now());
  } catch (err) {
    deps.logger.warn({ err: (err as Error).message }, 'App Home: the delivery figures could not be read; showing the releases without them');
    return undefined;
  }
}

async function homeFor(deps: ListenerDeps, userId: string) {
  const identity = await identityOf(deps, userId);
  const all = deps.config.pipelines;
  const own: PipelineConfig[] = identity ? all.filter((p) => ownedBy(p, identity)) : [];
  const ordered = own.length > 0 ? [...own, ...all.filter((p) => !own.includes(p))] : all;
  const read = ordered.slice(0, PIPELINES_READ);
  const delivery = await deliveryOf(deps, read.slice(0, DELIVERY_SHOWN));
  const pipelines = await Promise.all(read.map(async (pipeline) => ({ pipeline, releases: await deps.releases.list(pipeline.name, { limit: PER_PIPELINE }), ...(delivery?.has(pipeline.name) ? { delivery: delivery.get(pipeline.name)! } : {}) })));
  const withoutFigures = delivery ? ordered.length - Math.min(DELIVERY_SHOWN, read.length) : 0;
  return renderHome(pipelines, { own: Math.min(own.length, read.length), notShown: ordered.length - read.length, deliveryNotShown: withoutFigures });
}

export const appHome: ListenerGroup = {
  name: 'app-home',
  register(app: App, deps: ListenerDeps) {
    app.event('app_home_opened', async ({ event, client }) => {
      if (event.tab !== 'home') return;
      await client.views.publish({ user_id: event.user, view: await homeFor(deps, event.user) });
    });
  },
};
