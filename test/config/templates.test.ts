/**
 * Issue 22 item 1: `pipelineTemplates:` in the config file. A bad template stops start-up with
 * every problem named by its path, as a bad pipeline does; a good one parses beside pipelines.
 */
import { describe, expect, it } from 'vitest';
import { configProblems } from '../helpers/pipeline.js';
import { parseConfigFile } from '../../src/config/file.js';

const clusters = `
clusters:
  - { name: prod, kubeconfigContext: prod }
`;

const good = `${clusters}
pipelineTemplates:
  - name: "{{value}}"
    channel: C0FLEET
    generator:
      clusters: [prod]
      rollouts: { namespaces: [shop, pay], selector: "hangar.io/release-tracked=true" }
      groupBy: { label: app.kubernetes.io/name }
    stages:
      - { name: prod, cluster: "{{cluster}}", rollouts: { namespace: "{{namespace}}", selector: "hangar.io/release-tracked=true,app.kubernetes.io/name={{value}}" } }
`;

const bad = `${clusters}
pipelines:
  - name: shop
    channel: C0SHOP
    stages: [{ name: prod, cluster: prod, rollouts: { namespace: shop, selector: "app=shop" } }]
pipelineTemplates:
  - name: "{{value}}-{{team}}"
    channel: "#fleet"
    generator:
      clusters: [prdo]
      groupBy: { label: "not a label" }
    stages:
      - { name: prod, cluster: elsewhere, rollouts: { namespace: "{{namespace}}", selector: "app.kubernetes.io/name=={{value}}=" } }
  - name: "{{value}}"
    channel: C0FLEET
    generator:
      clusters: [prod]
      applications: { selector: "app.kubernetes.io/part-of=shop" }
      groupBy: { label: app.kubernetes.io/name }
    stages:
      - { name: "Prod_{{value}}", cluster: prod, applications: { namespace: argocd, selector: "app.kubernetes.io/name={{value}}" } }
`;

describe('pipeline templates in the config file', () => {
  it('parse beside pipelines, placeholders kept for each group', () => {
    const cfg = parseConfigFile(good);
    expect(cfg.pipelines).toEqual([]);
    const [t] = cfg.pipelineTemplates;
    expect(t?.name).toBe('{{value}}');
    expect(t?.channelAnnotation).toBe('glidepath.io/channel');
    expect(t?.releaseIdAnnotation).toBe('hangar.io/release-id');
    expect(t?.generator.rollouts?.namespaces).toEqual(['shop', 'pay']);
    expect(t?.generator.rollouts?.selector.text).toBe('hangar.io/release-tracked=true');
  });

  it('a bad template fails start-up with every problem named by its path', () => {
    const p = configProblems(() => parseConfigFile(bad));
    expect(p).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^pipelineTemplates\[0\]\.name: unknown placeholder \{\{team\}\}/),
        expect.stringMatching(/^pipelineTemplates\[0\]\.channel: must be a Slack channel id/),
        expect.stringMatching(/^pipelineTemplates\[0\]\.generator: a generator lists rollouts, applications or both/),
        expect.stringMatching(/^pipelineTemplates\[0\]\.generator\.groupBy\.label: must be a label key/),
        expect.stringMatching(/^pipelineTemplates\[1\]\.stages\[0\]\.name: stage name must be lowercase.*\(with placeholders filled by sample values\)/),
      ]),
    );
  });

  it('a template whose stages are wrong once filled names the stage field and the unknown cluster', () => {
    const text = `${clusters}
pipelineTemplates:
  - name: "{{value}}"
    channel: C0FLEET
    generator:
      clusters: [prod, staging]
      rollouts: { namespaces: [shop], selector: "tracked=true" }
      groupBy: { label: app }
    stages:
      - { name: prod, cluster: elsewhere, rollouts: { namespace: "{{namespace}}", selector: "app=={{value}}=" } }
`;
    const p = configProblems(() => parseConfigFile(text));
    expect(p).toEqual(expect.arrayContaining([expect.stringMatching(/^pipelineTemplates\[0\]\.generator\.clusters\[1\]: unknown cluster "staging"/), expect.stringMatching(/^pipelineTemplates\[0\]\.stages\[0\]\.rollouts\.selector: /)]));
    const unknownCluster = `${clusters}
pipelineTemplates:
  - name: "{{value}}"
    channel: C0FLEET
    generator: { clusters: [prod], rollouts: { namespaces: [shop], selector: "tracked=true" }, groupBy: { label: app } }
    stages: [{ name: prod, cluster: elsewhere, rollouts: { namespace: shop, selector: "app={{value}}" } }]
`;
    expect(configProblems(() => parseConfigFile(unknownCluster))).toEqual([expect.stringMatching(/^pipelineTemplates\[0\]\.stages\[0\]\.cluster: unknown cluster "elsewhere"/)]);
  });
});
