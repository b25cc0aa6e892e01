/**
 * What `status` says of the pipelines themselves, beside their releases: which pipelines templates
 * generated (and from which group), and the channels Slack said the bot cannot post in. Said only
 * when there is something to say: a config with no templates and no channel problem reads as before.
 */
import type { ConfigFile } from '../src/config/file.js';
import { catalogOf } from '../src/routing/catalog.js';
import { describeOrigin, listPipelines, originOf } from '../src/routing/pipeline-origins.js';
import { code, untrusted } from '../src/text/mrkdwn.js';
import type { CommandContext } from './types.js';

/** Group names listed per template before "and N more": a fleet's status stays one screen. */
const NAMES_PER_TEMPLATE = 25;
const PROBLEMS_LISTED = 10;

/** `*Pipelines*: 1 from the config, 6 generated — template apps (5): cart, checkout, …`. */
export function generatedPipelinesSection(config: ConfigFile): string | undefined {
  const templates = catalogOf(config)?.templates ?? [];
  if (templates.length === 0) return undefined;
  const listed = listPipelines(config);
  const fromConfig = listed.filter((l) => l.origin.source === 'config').length;
  const byTemplate = new Map<string, string[]>(templates.map((t) => [t.name, []]));
  for (const { pipeline, origin } of listed) if (origin.source === 'template') byTemplate.get(origin.template)?.push(pipeline.name);
  const generated = listed.length - fromConfig;
  const lines = [...byTemplate].map(([template, names]) => {
    if (names.length === 0) return `   template ${code(template, 120)}: no pipeline yet (no object its generator selects has been seen)`;
    const shown = names.slice(0, NAMES_PER_TEMPLATE).map((n) => untrusted(n, 63, { oneLine: true }));
    const more = names.length > shown.length ? `, and ${names.length - shown.length} more` : '';
    return `   template ${code(template, 120)} (${names.length}): ${shown.join(', ')}${more}`;
  });
  return [`*Pipelines*: ${fromConfig} from the config, ${generated} generated`, ...lines].join('\n');
}

/** One pipeline's origin, for `status <pipeline>`: said only of a generated one. */
export function originLine(config: ConfigFile, pipeline: string): string | undefined {
  const origin = originOf(config, pipeline);
  if (!origin || origin.source === 'config') return undefined;
  return `*${untrusted(pipeline, 63)}* is ${untrusted(describeOrigin(origin), 300)}.`;
}

/** The channel problems Slack reported, for every pipeline or the one named. */
export async function channelProblemsSection(ctx: CommandContext, only?: string): Promise<string | undefined> {
  if (!ctx.channelProblems) return undefined;
  let problems;
  try {
    problems = (await ctx.channelProblems.list()).filter((p) => !only || p.pipeline === only);
  } catch (err) {
    ctx.logger.warn({ err: (err as Error).message }, 'channel problems could not be read for status');
    return undefined;
  }
  if (problems.length === 0) return undefined;
  const lines = problems.slice(0, PROBLEMS_LISTED).map((p) => `   :warning: *${untrusted(p.pipeline, 63)}* (channel ${code(p.channel, 30)}): ${untrusted(p.problem, 200)}; its release threads cannot be posted`);
  if (problems.length > PROBLEMS_LISTED) lines.push(`   and ${problems.length - PROBLEMS_LISTED} more pipelines`);
  return [`*Channels Glidepath cannot post in* (${problems.length})`, ...lines].join('\n');
}
