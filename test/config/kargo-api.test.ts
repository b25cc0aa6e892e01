/** Kargo's API per cluster: the URL in the config, the token in KARGO_API_TOKENS, checked together at start-up. */
import { describe, expect, it } from 'vitest';
import { parseEnv } from '../../src/config/env.js';
import { parseConfigFile } from '../../src/config/file.js';
import { kargoApiEndpoints } from '../../src/config/kargo-api.js';
import { startGlidepath } from '../../src/glidepath.js';
import { testEnv } from '../helpers/glidepath.js';
import { configProblems } from '../helpers/pipeline.js';

const TOKEN = 'kargo-api-token-0123456789';
const config = (kargoApi: string) => `
clusters:
  - name: prod
    kubeconfigContext: prod
${kargoApi}
  - name: dev
    kubeconfigContext: dev
`;

describe('kargoApi', () => {
  it('pairs each cluster URL with its token from the environment', () => {
    const file = parseConfigFile(config('    kargoApi: { url: "https://kargo.example.com" }'));
    const endpoints = kargoApiEndpoints(file, parseEnv({ KARGO_API_TOKENS: `prod=${TOKEN}` }));
    expect([...endpoints]).toEqual([['prod', { url: 'https://kargo.example.com', token: TOKEN }]]);
    expect(kargoApiEndpoints(parseConfigFile(config('')), parseEnv({})).size).toBe(0);
  });

  it('takes https, and http only to a loopback address (the token travels with every call)', () => {
    expect(parseConfigFile(config('    kargoApi: { url: "http://127.0.0.1:8080" }')).clusters[0]!.kargoApi).toEqual({ url: 'http://127.0.0.1:8080' });
    for (const url of ['http://kargo.example.com', 'ftp://kargo', 'https://user:pw@kargo.example.com', 'kargo.example.com']) {
      expect(configProblems(() => parseConfigFile(config(`    kargoApi: { url: "${url}" }`)))[0]).toContain("must be an https:// URL of Kargo's API server such as https://kargo.example.com (http:// only to 127.0.0.1, localhost or [::1]");
    }
  });

  it('stops start-up when a URL has no token, or a token no URL or cluster; a token is never in the YAML', () => {
    const withUrl = parseConfigFile(config('    kargoApi: { url: "https://kargo.example.com" }'));
    expect(configProblems(() => kargoApiEndpoints(withUrl, parseEnv({})))).toEqual([
      'KARGO_API_TOKENS: cluster "prod" has kargoApi.url (https://kargo.example.com) but no token; add prod=<token> (a Kargo API token whose role may promote the Stages)',
    ]);
    expect(configProblems(() => kargoApiEndpoints(withUrl, parseEnv({ KARGO_API_TOKENS: `prod=${TOKEN},dev=${TOKEN}x,qa=${TOKEN}y` })))).toEqual([
      'KARGO_API_TOKENS: cluster "dev" has a token but no kargoApi.url in the config; set clusters[].kargoApi.url or drop the token',
      'KARGO_API_TOKENS: "qa" is not a configured cluster (clusters: prod, dev)',
    ]);
    expect(configProblems(() => parseConfigFile(config(`    kargoApi: { url: "https://kargo.example.com", token: "${TOKEN}" }`)))[0]).toMatch(/token/);
    expect(configProblems(() => parseEnv({ KARGO_API_TOKENS: 'prod=short' }))[0]).toContain('the token for cluster "prod" is shorter than 16 characters');
  });

  it('an ingest Glidepath refuses to start with a Kargo API URL but no token, before it opens anything', async () => {
    const file = parseConfigFile(config('    kargoApi: { url: "https://kargo.example.com" }'));
    await expect(startGlidepath({ env: testEnv(), config: file, roles: ['ingest'] })).rejects.toThrow(/KARGO_API_TOKENS: cluster "prod" has kargoApi.url/);
  });
});
