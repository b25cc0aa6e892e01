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
# No kubeconfig in these tests (webhook facts; actions go to clusters a test hands in): optional
# clusters start without one, where a required one would stop start-up.
clusters:
  - name: prod
    kubeconfigContext: prod
    optional: true
  - name: dev
    kubeconfigContext: dev
    optional: true
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
