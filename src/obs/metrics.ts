/** Prometheus metrics, on a registry of our own (never prom-client's global one). */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  factsReceived: Counter<'source'>;
  factsAccepted: Counter<'source'>;
  factsRejected: Counter<'source' | 'reason'>;
  /** Fact requests refused with 503 because the queues were past INGEST_MAX_QUEUED_FACTS (also counted in factsRejected as reason behind). */
  factsRefusedBehind: Counter<'source'>;
  factsRepeated: Counter<'source'>;
  factsReduced: Counter<'source' | 'outcome'>;
  factsUnmatched: Counter<'source'>;
  reducerSeconds: Histogram<'kind'>;
  queueDepth: Gauge<'queue' | 'state'>;
  factsWaiting: Gauge;
  stallAlerts: Counter<'pipeline'>;
  watchEvents: Counter<'cluster' | 'kind' | 'how'>;
  watchRestarts: Counter<'cluster' | 'kind' | 'relist'>;
  watchStreamsCut: Counter<'cluster' | 'kind' | 'reason'>;
  watchRelists: Counter<'cluster' | 'kind' | 'reason'>;
  watchBackoffSeconds: Counter<'cluster' | 'kind' | 'reason'>;
  watchLag: Histogram<'cluster' | 'kind'>;
  watchLeaseHeld: Gauge<'cluster'>;
  casConflicts: Counter;
  /** Writes a stale lease holder tried and the fence refused (what: record, dispatch). */
  fencedWrites: Counter<'what'>;
  partitionsHeld: Gauge;
  generatedPipelines: Gauge<'template'>;
  templateProblems: Counter<'template' | 'reason'>;
  configReloads: Counter<'result'>;
  configInfo: Gauge<'hash'>;
}

export function createMetrics(options: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'glidepath_' });
  return {
    registry,
    factsReceived: new Counter({ name: 'glidepath_facts_received_total', help: 'Fact requests received, by source', labelNames: ['source'], registers: [registry] }),
    factsAccepted: new Counter({ name: 'glidepath_facts_accepted_total', help: 'Facts queued (202), by source', labelNames: ['source'], registers: [registry] }),
    factsRejected: new Counter({ name: 'glidepath_facts_rejected_total', help: 'Fact requests refused, by source and reason', labelNames: ['source', 'reason'], registers: [registry] }),
    factsRepeated: new Counter({ name: 'glidepath_facts_repeated_total', help: 'Facts not reduced because the same observation (its identity) was queued before within 10 minutes, by source: a redelivered notification, or a version heard from the watch and a webhook', labelNames: ['source'], registers: [registry] }),
    factsRefusedBehind: new Counter({ name: 'glidepath_facts_refused_behind_total', help: 'Fact requests refused with 503 and Retry-After because more facts waited in the queues than INGEST_MAX_QUEUED_FACTS, by source', labelNames: ['source'], registers: [registry] }),
    factsReduced: new Counter({ name: 'glidepath_facts_reduced_total', help: 'Facts reduced, by outcome (applied, heartbeat, stale, out-of-order, ignored)', labelNames: ['source', 'outcome'], registers: [registry] }),
    factsUnmatched: new Counter({ name: 'glidepath_facts_unmatched_total', help: 'Facts that matched no pipeline stage', labelNames: ['source'], registers: [registry] }),
    reducerSeconds: new Histogram({ name: 'glidepath_reducer_seconds', help: 'Time to reduce one fact, store and dispatch included', labelNames: ['kind'], buckets: [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1], registers: [registry] }),
    factsWaiting: new Gauge({ name: 'glidepath_facts_waiting', help: 'Facts waiting in the facts queues for a reducer, over the partitions, read at scrape time (a job carries up to 128 facts: workers scale on this, not on jobs)', registers: [registry] }),
    queueDepth: new Gauge({ name: 'glidepath_queue_jobs', help: 'Jobs per queue and state, read at scrape time', labelNames: ['queue', 'state'], registers: [registry] }),
    stallAlerts: new Counter({ name: 'glidepath_stall_alerts_total', help: 'Stall alerts raised', labelNames: ['pipeline'], registers: [registry] }),
    watchEvents: new Counter({ name: 'glidepath_watch_objects_total', help: 'Objects seen by the watch source, by cluster, kind and how (list, watch, or deleted: a Kargo Stage that left its watch)', labelNames: ['cluster', 'kind', 'how'], registers: [registry] }),
    watchStreamsCut: new Counter({ name: 'glidepath_watch_streams_cut_total', help: 'Watch streams ended because the API server broke a bound (reason line_too_long: a line over settings.watchMaxLineMiB); each is resumed after a backoff', labelNames: ['cluster', 'kind', 'reason'], registers: [registry] }),
    watchRestarts: new Counter({ name: 'glidepath_watch_restarts_total', help: 'Watches that ended and resumed (relist=true: the version was gone, 410)', labelNames: ['cluster', 'kind', 'relist'], registers: [registry] }),
    watchRelists: new Counter({ name: 'glidepath_watch_relists_total', help: 'Lists made by the watch source, by cluster, kind and reason (initial, expired: 410, resync, error: no version to resume from)', labelNames: ['cluster', 'kind', 'reason'], registers: [registry] }),
    watchBackoffSeconds: new Counter({ name: 'glidepath_watch_backoff_seconds_total', help: 'Seconds the watch source waited before asking an API server again, by cluster, kind and reason (expired: 410 again, throttled: 429, server: 5xx or unreachable, short_watch)', labelNames: ['cluster', 'kind', 'reason'], registers: [registry] }),
    watchLag: new Histogram({ name: 'glidepath_watch_lag_seconds', help: 'From a watched object arriving to its fact being in the queue', labelNames: ['cluster', 'kind'], buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5], registers: [registry] }),
    watchLeaseHeld: new Gauge({ name: 'glidepath_watch_lease_held', help: '1 while this replica holds the watch lease of a cluster', labelNames: ['cluster'], registers: [registry] }),
    casConflicts: new Counter({ name: 'glidepath_release_cas_conflicts_total', help: 'Release saves that lost a compare-and-set to another writer and were reduced again', registers: [registry] }),
    fencedWrites: new Counter({ name: 'glidepath_fenced_writes_total', help: 'Writes refused because this process lost the lease it worked under (paused past its TTL, taken over), by what: record, dispatch, watch_fact', labelNames: ['what'], registers: [registry] }),
    generatedPipelines: new Gauge({ name: 'glidepath_generated_pipelines', help: 'Pipelines generated from templates now listed on this replica, by template', labelNames: ['template'], registers: [registry] }),
    templateProblems: new Counter({ name: 'glidepath_template_problems_total', help: 'Template groups that made no pipeline or a bad channel annotation, once each (reason invalid_pipeline, invalid_channel: not a channel id, channel_unusable: Slack says the bot cannot post there, shadowed: an explicit pipeline has its name)', labelNames: ['template', 'reason'], registers: [registry] }),
    configReloads: new Counter({ name: 'glidepath_config_reload_total', help: 'Config reloads (SIGHUP or the file changed), by result: applied, refused (invalid, or a field that needs a restart; the running config stays), unchanged (same file)', labelNames: ['result'], registers: [registry] }),
    configInfo: new Gauge({ name: 'glidepath_config_info', help: 'The running config: 1 for the hash (sha256, first 16 hex digits) of the file it was read from', labelNames: ['hash'], registers: [registry] }),
    partitionsHeld: new Gauge({ name: 'glidepath_fact_partitions_held', help: 'Fact partitions this replica holds a lease on and works', registers: [registry] }),
  };
}
