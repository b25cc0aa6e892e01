/** The scope filter: what the API server sent is matched again against the scope it was asked for. */
import { describe, expect, it } from 'vitest';
import { scopeFilter } from '../../src/facts/watch/scope-filter.js';
import { LogLimiter } from '../../src/obs/log-limit.js';

const object = (namespace: unknown, name: unknown, labels?: unknown) => ({ metadata: { namespace, name, labels } });

describe('scope filter', () => {
  it('refuses objects of another namespace, or outside the label selector', () => {
    const accept = scopeFilter({ namespace: 'shop', labelSelector: 'app=checkout,env in (prod,staging),!canary' });
    expect(accept(object('shop', 'a', { app: 'checkout', env: 'prod' }))).toBeUndefined();
    expect(accept(object('argocd', 'a', { app: 'checkout', env: 'prod' }))).toBe('outside_namespace');
    expect(accept(object(undefined, 'a', { app: 'checkout', env: 'prod' }))).toBe('outside_namespace');
    expect(accept(object('shop', 'a', { app: 'checkout', env: 'dev' }))).toBe('outside_selector');
    expect(accept(object('shop', 'a', { app: 'checkout', env: 'prod', canary: 'yes' }))).toBe('outside_selector');
    // Labels that are not a map are no labels.
    expect(accept(object('shop', 'a', ['app=checkout']))).toBe('outside_selector');
    expect(accept(null)).toBe('outside_namespace');
  });

  it('matches the metadata.name and metadata.namespace terms of a field selector, leaves other fields to the server', () => {
    const byName = scopeFilter({ namespace: 'argocd', fieldSelector: 'metadata.name=checkout' });
    expect(byName(object('argocd', 'checkout'))).toBeUndefined();
    expect(byName(object('argocd', 'ledger'))).toBe('outside_field_selector');
    const notName = scopeFilter({ namespace: 'argocd', fieldSelector: 'metadata.name!=checkout,status.phase=Running' });
    expect(notName(object('argocd', 'checkout'))).toBe('outside_field_selector');
    expect(notName(object('argocd', 'ledger'))).toBeUndefined();
    expect(scopeFilter({ namespace: 'argocd', fieldSelector: 'metadata.namespace==argocd' })(object('argocd', 'x'))).toBeUndefined();
  });

  it('with no selectors, keeps every object of the namespace', () => {
    expect(scopeFilter({ namespace: 'kargo-demo' })(object('kargo-demo', 'x'))).toBeUndefined();
  });
});

describe('LogLimiter', () => {
  it('lets one line a minute through per key, with the count it stands for', () => {
    let now = 0;
    const limit = new LogLimiter(60_000, () => now);
    expect(limit.take('a')).toBe(1);
    expect(limit.take('a')).toBeUndefined();
    expect(limit.take('b')).toBe(1);
    now = 30_000;
    expect(limit.take('a')).toBeUndefined();
    now = 60_000;
    expect(limit.take('a')).toBe(3);
    expect(limit.take('a')).toBeUndefined();
  });
});
