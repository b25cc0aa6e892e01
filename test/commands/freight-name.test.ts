/**
 * One name for a Freight everywhere (issue 19, item 6): a release that is a Freight reads
 * "brave-lynx (Freight 512fea3)" in its thread's parent, in `/glidepath status` and in the App
 * Home, never `freight-512fea34e78d…`; before a Stage told its alias, the short content name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterClients } from '../../src/kube/clusters.js';
import { renderHome } from '../../src/slack/render/home.js';
import { renderParent } from '../../src/slack/render/parent.js';
import type { ReleaseRecord } from '../../src/releases/record/record.js';
import { said, startCommandsRig, type CommandsRig } from '../helpers/commands-rig.js';
import { pipelineConfig, record, stage, target } from '../slack/support/records.js';

const NAME = '512fea34e78d2d31dc1e31cac67b507e66d4f279';

function freightRelease(alias?: string): ReleaseRecord {
  const kargo = { freight: { name: NAME, ...(alias ? { alias } : {}), images: ['checkout:1.29.0'], commits: [] }, verificationConfigured: false, targetAware: false, judged: 'healthy' as const };
  const dev = target('dev', { ref: { kind: 'KargoStage', cluster: 'prod', namespace: 'kargo-checkout', name: 'dev' }, phase: 'Healthy', kargo });
  return record({ pipeline: 'checkout', releaseId: `freight-${NAME}`, idSource: 'freight', commit: undefined, pullRequestUrl: undefined, author: undefined, stages: [stage('prod', 'Healthy', [dev])] });
}

function homeText(r: ReleaseRecord): string {
  const view = renderHome([{ pipeline: pipelineConfig('checkout', 'C0CHECKOUT', ['prod']), releases: [r] }]);
  return view.blocks.flatMap((b) => (b.type === 'section' ? [b.text.text] : [])).join('\n');
}

let rig: CommandsRig;
beforeAll(async () => {
  rig = await startCommandsRig({ clusters: new ClusterClients([]) });
});
afterAll(() => rig?.close());

describe('a Freight release has one name', () => {
  it('the thread, status and the App Home: alias, then the short content name', async () => {
    const r = freightRelease('brave-lynx');
    await rig.store.update('checkout', r.releaseId, () => ({ next: r, result: null }));
    const header = (renderParent(r, pipelineConfig('checkout', 'C0CHECKOUT', ['prod'])).blocks[0] as { text: { text: string } }).text.text;
    expect(header).toBe('Release brave-lynx (Freight 512fea3) — checkout');
    expect(homeText(r)).toContain('`brave-lynx (Freight 512fea3)` · ');
    const status = said(await (await rig.command('status checkout')).first());
    expect(status).toContain('*checkout* release `brave-lynx (Freight 512fea3)` — ');
    for (const text of [header, homeText(r), status]) expect(text).not.toContain(`freight-${NAME.slice(0, 12)}`);
  });

  it('before any Stage told its alias: the short content name, the same in each', () => {
    const r = freightRelease();
    expect((renderParent(r, pipelineConfig('checkout', 'C0CHECKOUT', ['prod'])).blocks[0] as { text: { text: string } }).text.text).toBe('Release Freight 512fea34e78d — checkout');
    expect(homeText(r)).toContain('`Freight 512fea34e78d` · ');
  });
});
