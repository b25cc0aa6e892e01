/** Publishes the App Home tab (active releases per pipeline) when a user opens it. */
import type { App } from '@slack/bolt';
import { renderHome } from '../../render/home.js';
import type { ListenerDeps, ListenerGroup } from '../types.js';

/** Releases shown per pipeline; the Home tab holds 100 blocks. */
const PER_PIPELINE = 10;

async function homeFor(deps: ListenerDeps) {
  const pipelines = await Promise.all(
    deps.config.pipelines.map(async (pipeline) => ({
      pipeline,
      releases: await deps.releases.list(pipeline.name, { limit: PER_PIPELINE }),
    })),
  );
  return renderHome(pipelines);
}

export const appHome: ListenerGroup = {
  name: 'app-home',
  register(app: App, deps: ListenerDeps) {
    app.event('app_home_opened', async ({ event, client }) => {
      if (event.tab !== 'home') return;
      await client.views.publish({ user_id: event.user, view: await homeFor(deps) });
    });
  },
};
