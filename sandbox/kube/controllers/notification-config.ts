/**
 * Reads Glidepath's notification ConfigMaps (deploy/notifications/) so the simulated engine sends
 * exactly the triggers, subscriptions and body shapes that a real cluster would be given.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

export interface Subscription {
  selector?: string;
  triggers: string[];
}

export interface NotificationConfig {
  /** Trigger name → template names it sends. */
  triggers: Record<string, string[]>;
  /** Trigger name → its (first) condition's `when` text: the engine hashes it into notified keys. */
  conditions: Record<string, string>;
  /** Template name → webhook body (Go template text). */
  templates: Record<string, string>;
  subscriptions: Subscription[];
}

export const ROLLOUTS_CONFIG_FILE = 'argo-rollouts-notification-configmap.yaml';
export const ARGOCD_CONFIG_FILE = 'argocd-notifications-cm.yaml';

export function defaultNotificationDirectory(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 7; i++) {
    const candidate = join(dir, 'deploy', 'notifications');
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new Error('deploy/notifications not found next to the sources');
}

export function loadNotificationConfig(file: string, directory = defaultNotificationDirectory()): NotificationConfig {
  const cm = parse(readFileSync(join(directory, file), 'utf8')) as { data?: Record<string, string> };
  const data = cm.data ?? {};
  const triggers: Record<string, string[]> = {};
  const conditions: Record<string, string> = {};
  const templates: Record<string, string> = {};
  for (const [key, value] of Object.entries(data)) {
    if (key.startsWith('trigger.')) {
      const parsed = parse(value) as { send?: string[]; when?: string }[];
      triggers[key.slice('trigger.'.length)] = parsed.flatMap((c) => c.send ?? []);
      conditions[key.slice('trigger.'.length)] = parsed[0]?.when ?? '';
    } else if (key.startsWith('template.')) {
      const tpl = parse(value) as { webhook?: Record<string, { body?: string }> };
      const body = Object.values(tpl.webhook ?? {})[0]?.body;
      if (body !== undefined) templates[key.slice('template.'.length)] = body;
    }
  }
  const subscriptions = ((data.subscriptions ? parse(data.subscriptions) : []) as { selector?: string; triggers?: string[] }[]).map((s) => ({
    ...(s.selector ? { selector: s.selector } : {}),
    triggers: s.triggers ?? [],
  }));
  return { triggers, conditions, templates, subscriptions };
}

/**
 * The key structure of a template body: every `{{…}}` action becomes null, so the JSON skeleton
 * parses and its keys can be compared with what the simulator sends.
 */
export function templateSkeleton(body: string): unknown {
  const text = body
    .replace(/\{\{\s*if\s+\$i\s*\}\},\{\{\s*end\s*\}\}/g, '')
    .replace(/\{\{\s*(range|end)[^}]*\}\}/g, '')
    .replace(/\{\{[^}]*\}\}/g, 'null');
  return JSON.parse(text);
}
