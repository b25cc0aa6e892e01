/**
 * Slack gives a slash command 3 seconds: the bot acks before it touches a cluster, and answers
 * through response_url when the cluster does. Here the cluster does not answer at all until the
 * test lets go of it, so the order is shown without timing anything.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.js';
import { ClusterClients } from '../../src/kube/clusters.js';
import { writeKubeconfig } from '../../sandbox/kube/kubeconfig.js';
import { said, startCommandsRig, type CommandsRig } from '../helpers/commands-rig.js';

let rig: CommandsRig | undefined;
let silent: Server | undefined;
afterEach(async () => {
  await rig?.close();
  silent?.closeAllConnections();
  silent?.close();
});

it('acks a slash command before the cluster answers, then follows up through response_url', async () => {
  let held = 0;
  silent = createServer(() => void (held += 1));
  await new Promise<void>((r) => silent!.listen(0, '127.0.0.1', () => r()));
  const path = join(tempDir('glidepath-ack-'), 'kubeconfig');
  writeKubeconfig(path, [{ name: 'prod', server: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, users: [{ name: 'glidepath', token: 't' }], defaultUser: 'glidepath' }]);
  rig = await startCommandsRig({ clusters: new ClusterClients([{ name: 'prod', kubeconfigPath: path, kubeconfigContext: 'prod' }], { requestTimeoutMs: 60_000 }) });

  const answers = await rig.command('abort prod/shop/checkout');
  // The command was acked (200) while the cluster still holds the request: nothing answered yet.
  expect(answers.responses()).toEqual([]);
  for (let i = 0; i < 200 && held === 0; i++) await new Promise((r) => setTimeout(r, 10));
  expect(held).toBe(1);

  silent.closeAllConnections();
  const answer = await answers.first();
  expect(said(answer)).toMatch(/^:x: Cannot reach cluster prod \(\w+\) to get rollouts: check that its API server is up/);
});
