/** What the pipeline catalog reports, said in the log and counted: a group that cannot be a pipeline is one line, never a crash. */
import type { Logger } from '../obs/logger.js';
import type { Metrics } from '../obs/metrics.js';
import type { CatalogEvents } from './catalog.js';

const WHY = {
  invalid_pipeline: 'a template group makes no valid pipeline; its objects are not routed until the template or their labels change',
  invalid_channel: 'a channel annotation is not a Slack channel id (such as C0123ABCD); the template\'s channel is used',
  shadowed: 'a template generates the name of an explicit pipeline; the explicit pipeline wins',
} as const;

export function catalogEvents(logger: Logger, metrics: Metrics): CatalogEvents {
  return {
    generated(g) {
      metrics.generatedPipelines.inc({ template: g.template });
      logger.info({ pipeline: g.pipeline.name, template: g.template, group: g.group, channel: g.pipeline.channel, channelFrom: g.channelFrom }, 'pipeline generated from a template');
    },
    retired(g) {
      metrics.generatedPipelines.dec({ template: g.template });
      logger.info({ pipeline: g.pipeline.name, template: g.template, group: g.group }, 'generated pipeline retired: its last object is gone (its threads stay until their TTL)');
    },
    problem(reason, detail) {
      metrics.templateProblems.inc({ template: String(detail.template ?? ''), reason });
      logger.warn({ reason, ...detail }, WHY[reason]);
    },
  };
}
