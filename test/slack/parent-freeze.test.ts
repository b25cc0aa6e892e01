/**
 * An open config freeze shows in the release's parent message as a line under the stage it holds
 * (issue #23 item 5), and only there: facts → reducer → writer → Slack stand-in, real Bolt.
 */
import { afterEach, expect, it } from 'vitest';
import { testConfig } from '../helpers/pipeline.js';
import { releaseFacts } from './e2e-scenario.js';
import { eventually } from '../helpers/slack-harness.js';
import { startPipelineRig, type PipelineRig } from '../helpers/slack-rigs.js';

const CHANNEL = 'C0123CHECKOUT';
let rig: PipelineRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

// Open from 2020 to 2099, so that the writer's own clock (no injection there) is inside it.
const FREEZE = `
freezes:
  - name: year-end
    reason: "year-end code freeze, ask #release-managers"
    timeZone: UTC
    start: "2020-01-01T00:00"
    end: "2099-01-01T00:00"
    stages: [prod]
`;

it('the parent message shows a line under the frozen stage saying until when, by which freeze and why', async () => {
  rig = await startPipelineRig({ config: testConfig(FREEZE) });
  await rig.startBot();
  for (const f of releaseFacts(Date.now()).facts) await rig.addAndReduce(f);
  await eventually(async () => (await rig!.idle()) || undefined, 'the release to be written', 60_000);
  const parent = rig.slack.transcript.messages(CHANNEL)[0]!;
  const sections = (parent.blocks as { type: string; text?: { text: string } }[]).filter((b) => b.type === 'section').map((b) => b.text!.text);
  const prod = sections.find((t) => t.includes('*prod*'))!;
  const staging = sections.find((t) => t.includes('*staging*'))!;
  expect(prod.split('\n')).toContain(":snowflake: frozen until Thu 2099-01-01 00:00 UTC by freeze 'year-end': year-end code freeze, ask #release-managers");
  expect(staging).not.toContain(':snowflake:');
});
