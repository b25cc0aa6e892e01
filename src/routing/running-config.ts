/**
 * A reloaded config applied to the running one in place. Every part of Glidepath holds the one
 * running config object the composition root made (withCatalog) and reads its fields when it
 * uses them, so replacing the fields here is what makes routing, the watch's scopes, commands and
 * the reducer see the new file from their next read; the catalog re-derives its pipelines.
 * What a part read once at start-up is a field that needs a restart (src/config/live-fields.ts).
 */
import type { ConfigFile } from '../config/file.js';
import { catalogOf } from './catalog.js';

export function applyConfig(running: ConfigFile, next: ConfigFile): void {
  const catalog = catalogOf(running);
  if (!catalog) throw new Error('applyConfig: the running config is not one withCatalog made');
  const fields = running as { -readonly [K in keyof ConfigFile]: ConfigFile[K] };
  fields.settings = next.settings;
  fields.clusters = next.clusters;
  fields.pipelineTemplates = next.pipelineTemplates;
  // Read at each action and each parent render: a freeze added by a reload holds the next one.
  fields.freezes = next.freezes;
  // `pipelines` is the catalog's: the file's explicit ones and what the templates generate.
  catalog.reconfigure(next.pipelines, next.pipelineTemplates);
}
