import { parseConfigFile, type ConfigFile } from '../../src/config/file.js';

export function testConfig(extra = ''): ConfigFile {
  return parseConfigFile(`
settings:
  stallAfterMinutes: 20
  unhealthyGraceMinutes: 2
  pullRequestHosts: [git.example.com]
clusters:
  - name: prod
    kubeconfigContext: prod
  - name: dev
    kubeconfigContext: dev
pipelines:
  - name: checkout
    channel: C0123CHECKOUT
    releaseIdAnnotation: hangar.io/release-id
    stages:
      - name: staging
        cluster: prod
        rollouts: { namespace: shop, selector: "app.kubernetes.io/part-of=checkout,env=staging" }
      - name: prod
        cluster: prod
        rollouts: { namespace: shop, selector: "app.kubernetes.io/part-of=checkout,env=prod" }
${extra}`);
}
