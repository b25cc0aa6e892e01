import { ConfigError } from '../../src/config/errors.js';
import { parseConfigFile, type ConfigFile } from '../../src/config/file.js';

/** The problems a ConfigError thrown by `run` lists (none when it does not throw); any other error is thrown. */
export function configProblems(run: () => unknown): string[] {
  try {
    run();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

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
