/**
 * deploy/monitoring is what an operator installs to be told when Glidepath is in trouble. Its
 * alerts, dashboard and docs are only worth something if the metrics they name are the ones a
 * running Glidepath exposes, the rules load in Prometheus and fire on the series they are about,
 * and kustomize renders a scrape that reaches every role's pods.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSlackStandIn, type SlackStandIn } from '../../sandbox/slack/server.js';
import { createMetrics } from '../../src/obs/metrics.js';
import { dropPrefix, startTestGlidepath, testEnv, type Glidepath } from '../helpers/glidepath.js';
import { testConfig } from '../helpers/pipeline.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(`${ROOT}${path}`, 'utf8');

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface RuleSpec {
  groups: { name: string; rules: Rule[] }[];
}
interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
}

const ruleSpec = (parse(read('deploy/monitoring/prometheusrule.yaml')) as { spec: RuleSpec }).spec;
const rules = ruleSpec.groups.flatMap((g) => g.rules);
const dashboard = JSON.parse(read('deploy/monitoring/dashboards/glidepath.json')) as { panels: { type: string; title: string; targets?: { expr: string }[] }[] };
const dashboardExprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: `dashboard panel "${p.title}"`, expr: t.expr })));
const ruleExprs = rules.map((r) => ({ where: `alert ${r.alert ?? r.record}`, expr: r.expr }));
/** The prose that names metrics to a person: each must be a metric a running Glidepath has. */
const DOCS = ['README.md', 'deploy/README.md', 'deploy/monitoring/README.md', 'docs/operations.md'];

const METRIC_NAME = /\bglidepath_[a-z0-9_]*[a-z0-9]\b/g;
const namesIn = (text: string) => [...new Set(text.match(METRIC_NAME) ?? [])];

/** The metric family a sample name belongs to (histogram and summary series carry a suffix). */
function family(name: string, types: Map<string, string>): string | undefined {
  if (types.has(name)) return name;
  const base = name.replace(/_(bucket|sum|count)$/, '');
  return ['histogram', 'summary'].includes(types.get(base) ?? '') ? base : undefined;
}

/** `# TYPE name type` lines, and the label sets of each sample, of a /metrics answer. */
function exposition(text: string): { types: Map<string, string>; samples: Map<string, Record<string, string>[]> } {
  const types = new Map<string, string>();
  const samples = new Map<string, Record<string, string>[]>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    const sample = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? \S+/.exec(line);
    if (!sample || line.startsWith('#')) continue;
    const labels = Object.fromEntries([...(sample[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]));
    samples.set(sample[1]!, [...(samples.get(sample[1]!) ?? []), labels]);
  }
  return { types, samples };
}

/** Equality matchers on Glidepath metrics in an expression: `name{a="x", b="y"}`. */
function equalityMatchers(expr: string): { metric: string; label: string; value: string }[] {
  return [...expr.matchAll(/\b(glidepath_\w+)\{([^}]*)\}/g)].flatMap((m) =>
    [...m[2]!.matchAll(/(\w+)\s*=\s*"([^"]*)"/g)].map((l) => ({ metric: m[1]!, label: l[1]!, value: l[2]! })),
  );
}

describe('metrics named by deploy/monitoring and the docs, on /metrics of a running Glidepath', () => {
  let slack: SlackStandIn;
  let glidepath: Glidepath;
  let metricsText = '';
  const env = testEnv({ SLACK_BOT_TOKEN: 'xoxb-monitoring', SLACK_SIGNING_SECRET: 'monitoring-signing-secret' });
  beforeAll(async () => {
    slack = await startSlackStandIn({ botToken: 'xoxb-monitoring' });
    // Every role, with the default process metrics on, as src/main.ts starts it.
    glidepath = await startTestGlidepath(testConfig(), { ...env, SLACK_API_URL: slack.apiUrl }, { metrics: createMetrics() });
    const res = await fetch(`${glidepath.url}/metrics`);
    expect(res.status).toBe(200);
    metricsText = await res.text();
  });
  afterAll(async () => {
    await glidepath?.close();
    await slack?.close();
    await dropPrefix(env.REDIS_PREFIX);
  });

  it('every metric the alerts, the dashboard and the docs name is registered (a # TYPE line), histogram series included', () => {
    const { types } = exposition(metricsText);
    const named = [
      ...[...ruleExprs, ...dashboardExprs].flatMap(({ where, expr }) => namesIn(expr).map((name) => ({ where, name }))),
      ...DOCS.flatMap((doc) => namesIn(read(doc)).map((name) => ({ where: doc, name }))),
    ];
    // The check must have something to check: the alerts' own metrics are among the names found.
    for (const core of ['glidepath_stall_alerts_total', 'glidepath_slack_oldest_failure_seconds', 'glidepath_watch_lag_seconds_bucket', 'glidepath_watch_lease_held', 'glidepath_facts_waiting']) {
      expect(named.map((n) => n.name)).toContain(core);
    }
    const missing = named.filter((n) => family(n.name, types) === undefined).map((n) => `${n.where}: ${n.name}`);
    expect([...new Set(missing)]).toEqual([]);
  });

  it('the label values the alerts and the dashboard select on are ones Glidepath reports (where it has samples)', () => {
    const { samples } = exposition(metricsText);
    expect(samples.get('glidepath_queue_jobs')?.length, 'queue depths are read at every scrape').toBeGreaterThan(0);
    const docMatchers = DOCS.flatMap((doc) => equalityMatchers(read(doc)).map((m) => ({ where: doc, ...m })));
    const matchers = [...[...ruleExprs, ...dashboardExprs].flatMap(({ where, expr }) => equalityMatchers(expr).map((m) => ({ where, ...m }))), ...docMatchers];
    expect(matchers.some((m) => m.metric === 'glidepath_queue_jobs' && m.label === 'state')).toBe(true);
    const unmatched = matchers
      .filter((m) => samples.has(m.metric))
      .filter((m) => !samples.get(m.metric)!.some((labels) => labels[m.label] === m.value))
      .map((m) => `${m.where}: ${m.metric}{${m.label}="${m.value}"} matches no sample`);
    expect([...new Set(unmatched)]).toEqual([]);
  });
});

describe('deploy/monitoring/dashboards/glidepath.json', () => {
  it('charts every metric an alert reads, so the dashboard shows what an alert fired on', () => {
    const charted = new Set(dashboardExprs.flatMap(({ expr }) => namesIn(expr)));
    const alerting = ruleExprs.flatMap(({ where, expr }) => namesIn(expr).map((name) => ({ where, name })));
    // A dashboard cannot chart the absence of every process; its panels are empty then.
    const uncharted = alerting.filter((a) => !charted.has(a.name) && a.name !== 'glidepath_process_start_time_seconds');
    expect(uncharted.map((a) => `${a.where}: ${a.name}`)).toEqual([]);
    expect(dashboardExprs.length).toBeGreaterThan(15);
  });
});

describe('deploy/monitoring/prometheusrule.yaml', () => {
  const operations = read('docs/operations.md');
  const anchors = new Set([...operations.matchAll(/^#+ (.+)$/gm)].map((m) => m[1]!.trim().toLowerCase().replace(/[^\w\- ]/g, '').replace(/ /g, '-')));

  it('every alert has a severity, a summary, a description and a runbook section in docs/operations.md', () => {
    expect(rules.length).toBeGreaterThanOrEqual(6);
    for (const r of rules) {
      expect(r.alert, r.expr).toBeDefined();
      expect(['warning', 'critical'], r.alert).toContain(r.labels?.severity);
      expect(r.annotations?.summary?.length, r.alert).toBeGreaterThan(10);
      expect(r.annotations?.description?.length, r.alert).toBeGreaterThan(80);
      const [path, anchor] = (r.annotations?.runbook_url ?? '').split('#');
      expect(path, r.alert).toBe('docs/operations.md');
      expect(anchors.has(anchor!), `${r.alert}: docs/operations.md has no heading for #${anchor}`).toBe(true);
    }
  });
});

const PROMTOOL = spawnSync('promtool', ['--version'], { encoding: 'utf8' }).status === 0;
const IN_CI = process.env.CI !== undefined && !['', '0', 'false'].includes(process.env.CI);
const NO_PROMTOOL = 'promtool is not on PATH: apt-get install prometheus (Debian), or run .ci/run, which installs it';

describe('the rules in Prometheus (promtool)', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'glidepath-rules-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  beforeEach((ctx) => {
    // Skipped only on a workstation without promtool; in CI a missing promtool fails the test.
    if (!PROMTOOL && IN_CI) throw new Error(NO_PROMTOOL);
    ctx.skip(!PROMTOOL, NO_PROMTOOL);
  });
  const promtool = (...args: string[]) => {
    const run = spawnSync('promtool', args, { cwd: dir, encoding: 'utf8' });
    return { ok: run.status === 0, output: `${run.stdout}\n${run.stderr}` };
  };

  it('promtool check rules accepts the PrometheusRule\'s groups, annotations and templates included', () => {
    writeFileSync(join(dir, 'all.yaml'), stringify(ruleSpec));
    const run = promtool('check', 'rules', 'all.yaml');
    expect(run.output).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(run.ok, run.output).toBe(true);
  });

  it('every dashboard query is PromQL Prometheus accepts (promtool check rules, as recording rules)', () => {
    const recorded = { groups: [{ name: 'dashboard', rules: dashboardExprs.map(({ expr }, i) => ({ record: `glidepath_dashboard:query_${i}`, expr })) }] };
    writeFileSync(join(dir, 'dashboard.yaml'), stringify(recorded));
    const run = promtool('check', 'rules', 'dashboard.yaml');
    expect(run.output).toContain(`SUCCESS: ${dashboardExprs.length} rules found`);
    expect(run.ok, run.output).toBe(true);
  });

  it('promtool test rules: stall, Slack retrying, Slack dropped, watch lag, lease, queue and down alerts fire on the series written for them, and not on healthy ones', () => {
    // promtool compares annotations whole; the unit tests check the summary (templates with labels and values).
    const summaries = { groups: ruleSpec.groups.map((g) => ({ ...g, rules: g.rules.map((r) => ({ ...r, annotations: { summary: r.annotations!.summary! } })) })) };
    writeFileSync(join(dir, 'rules.yaml'), stringify(summaries));
    const unitTests = read('test/deploy/fixtures/monitoring-rules.promtool.yaml');
    writeFileSync(join(dir, 'tests.yaml'), unitTests);
    // Each alert is tested to fire (a non-empty exp_alerts for it).
    const tested = (parse(unitTests) as { tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[] }).tests
      .flatMap((t) => t.alert_rule_test)
      .filter((a) => a.exp_alerts.length > 0)
      .map((a) => a.alertname);
    expect(new Set(tested)).toEqual(new Set(rules.map((r) => r.alert)));
    const run = promtool('test', 'rules', 'tests.yaml');
    expect(run.ok, run.output).toBe(true);
    expect(run.output).toContain('SUCCESS');
  });
});

const KUBECTL = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;
const NO_KUBECTL = 'kubectl is not on PATH, so deploy/ cannot be rendered here (CI has it)';

function kustomize(dir: string): K8sObject[] {
  const run = spawnSync('kubectl', ['kustomize', `${ROOT}deploy/${dir}`], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`kubectl kustomize deploy/${dir} failed: ${run.stderr}`);
  return parseAllDocuments(run.stdout).map((d) => d.toJS() as K8sObject).filter(Boolean);
}
const selects = (selector: Record<string, string>, labels: Record<string, string> = {}) => Object.entries(selector).every(([k, v]) => labels[k] === v);
const idOf = (o: K8sObject) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`;

describe('deploy/monitoring rendered with kubectl kustomize', () => {
  let monitoring: K8sObject[] = [];
  let overlay: K8sObject[] = [];
  let base: K8sObject[] = [];
  beforeAll(() => {
    if (!KUBECTL) return;
    monitoring = kustomize('monitoring');
    overlay = kustomize('overlays/with-monitoring');
    base = kustomize('base');
  });
  beforeEach((ctx) => ctx.skip(!KUBECTL, NO_KUBECTL));

  it('renders the PrometheusRule, ServiceMonitor, metrics Service and dashboard as the files have them', () => {
    expect(monitoring.map(idOf).sort()).toEqual([
      'ConfigMap glidepath/glidepath-dashboard',
      'PrometheusRule glidepath/glidepath',
      'Service glidepath/glidepath-metrics',
      'ServiceMonitor glidepath/glidepath',
    ]);
    expect(monitoring.find((o) => o.kind === 'PrometheusRule')!.spec).toEqual(ruleSpec);
    const cm = monitoring.find((o) => o.kind === 'ConfigMap')!;
    expect(cm.metadata.labels?.grafana_dashboard).toBe('1');
    expect(JSON.parse(cm.data!['glidepath.json']!)).toEqual(dashboard);
  });

  it('the with-monitoring overlay is the base plus deploy/monitoring, nothing changed or lost', () => {
    expect(overlay.map(idOf).sort()).toEqual([...base, ...monitoring].map(idOf).sort());
  });

  it('the ServiceMonitor scrapes /metrics on the http port of every ingest, worker and writer pod', () => {
    const monitor = overlay.find((o) => o.kind === 'ServiceMonitor')!;
    const services = overlay.filter((o) => o.kind === 'Service' && selects(monitor.spec.selector.matchLabels, o.metadata.labels));
    expect(services.map((s) => s.metadata.name)).toEqual(['glidepath-metrics']);
    const service = services[0]!;
    expect(monitor.spec.endpoints).toEqual([expect.objectContaining({ port: 'http', path: '/metrics' })]);
    const port = service.spec.ports.find((p: { name: string }) => p.name === 'http');
    const scraped = overlay
      .filter((o) => o.kind === 'Deployment' && selects(service.spec.selector, o.spec.template.metadata.labels))
      .filter((d) => d.spec.template.spec.containers.some((c: { ports?: { name: string }[] }) => c.ports?.some((p) => p.name === port.targetPort)));
    expect(scraped.map((d) => d.spec.template.metadata.labels['app.kubernetes.io/component']).sort()).toEqual(['ingest', 'worker', 'writer']);
  });
});
