import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

const manifest = parse(readFileSync(new URL('../../deploy/slack/manifest.yaml', import.meta.url), 'utf8')) as {
  features: { slash_commands: { command: string; url: string }[]; app_home: { home_tab_enabled: boolean } };
  oauth_config: { scopes: { bot: string[] } };
  settings: { interactivity: { is_enabled: boolean; request_url: string }; socket_mode_enabled: boolean; event_subscriptions: { bot_events: string[]; request_url: string } };
};

describe('deploy/slack/manifest.yaml', () => {
  it('declares the command, interactivity, App Home and one endpoint for everything', () => {
    expect(manifest.features.slash_commands.map((c) => c.command)).toEqual(['/glidepath']);
    expect(manifest.features.app_home.home_tab_enabled).toBe(true);
    expect(manifest.settings.interactivity.is_enabled).toBe(true);
    expect(manifest.settings.event_subscriptions.bot_events).toEqual(['app_home_opened']);
    const urls = [manifest.settings.interactivity.request_url, manifest.settings.event_subscriptions.request_url, ...manifest.features.slash_commands.map((c) => c.url)];
    expect(new Set(urls.map((u) => new URL(u).pathname))).toEqual(new Set(['/slack/events']));
    expect(typeof manifest.settings.socket_mode_enabled).toBe('boolean');
  });

  it('asks for the bot scopes Glidepath uses and no more', () => {
    expect([...manifest.oauth_config.scopes.bot].sort()).toEqual(['channels:history', 'channels:read', 'chat:write', 'commands', 'files:write', 'groups:history', 'groups:read', 'usergroups:read', 'users:read']);
  });
});
