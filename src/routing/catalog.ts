/**
 * The pipelines routing knows: the config's explicit ones and those its templates generate, one
 * per group of objects seen. The one home of "which pipelines are there": ingest and the watch
 * (through the fact queue's partitioning), the worker (through routing) and the commands all read
 * the running config's `pipelines`, which the composition root makes read this catalog.
 *
 * A replica's generated set is derived from the objects it has seen (facts routed, objects the
 * watch listed, deletions the watch saw), so replicas that saw the same objects agree: a group's
 * pipeline is filled from its first object in key order, never from the order objects arrived.
 * A group appears with its first object and retires with its last; a retired pipeline is still
 * found by name (its threads, watchdog rechecks and buttons keep working until their TTL) but no
 * longer listed or routed to from objects.
 */
import type { ConfigFile, PipelineConfig, PipelineTemplate } from '../config/file.js';
import { channelId, instantiateTemplate } from '../config/file.js';
import type { TemplateBindings } from '../config/templates.js';
import type { Fact } from '../facts/fact.js';
import { isLate, pipelineShape, plainBindings, sameObject } from './catalog-objects.js';
import { bindingsOf, generatedName, memberKey, type GeneratedFrom } from './generator.js';

export interface GeneratedPipeline {
  pipeline: PipelineConfig;
  template: string;
  /** The group label's value. */
  group: string;
  /** Where the channel came from: the template's default, or an object's annotation. */
  channelFrom: 'template' | 'annotation';
  /** What filled the template (the group's first object): another replica fills the same pipeline from it. */
  bindings: TemplateBindings;
}

/** A generated pipeline as replicas share it (src/routing/shared-catalog.ts): retired ones carry when. */
export interface SharedPipeline {
  template: string;
  bindings: TemplateBindings;
  channel: string;
  channelFrom: GeneratedPipeline['channelFrom'];
  retiredAt?: number;
}

export interface CatalogEvents {
  generated?(g: GeneratedPipeline): void;
  retired?(g: GeneratedPipeline): void;
  /** A group that makes no pipeline (a value that is no valid name), a bad channel annotation, a name an explicit pipeline has. */
  problem?(reason: 'invalid_pipeline' | 'invalid_channel' | 'shadowed', detail: Record<string, unknown>): void;
}

interface Group {
  template: PipelineTemplate;
  name: string;
  members: Map<string, GeneratedFrom>;
  generated?: GeneratedPipeline;
}

/** Deleted objects remembered so their late facts (queued before the deletion) do not bring the group back. */
const TOMBSTONES = 10_000;
const RETIRED = 10_000;

export class PipelineCatalog {
  private readonly groups = new Map<string, Group>();
  /** Groups each object is a member of (one per template at most). */
  private readonly memberOf = new Map<string, Set<string>>();
  /** Each member object as last observed: a heartbeat with the same labels and annotations is in the same groups (no template filled). */
  private readonly lastSeen = new Map<string, GeneratedFrom>();
  private readonly retired = new Map<string, GeneratedPipeline>();
  /** Deleted objects by key: the uid and resourceVersion of what was last seen of them. */
  private readonly tombstones = new Map<string, { uid: string; resourceVersion?: string }>();
  private readonly reported = new Set<string>();
  private listed: PipelineConfig[] | undefined;
  private readonly channelListeners: ((g: GeneratedPipeline) => void)[] = [];
  private readonly changeListeners: ((g: GeneratedPipeline, change: 'generated' | 'retired') => void)[] = [];
  /** Pipelines other replicas generated from objects this one has not seen (the shared record), by name. */
  private adopted = new Map<string, GeneratedPipeline>();
  /** The shared record, asked again when a name is not known here (set by the composition root). */
  remote?: { refresh(): Promise<void> };

  /** The last shared record adopted: adopted again with the templates of a reloaded config. */
  private lastShared: ReadonlyMap<string, SharedPipeline> = new Map();
  /** Explicit pipelines a reload removed: found by name (their threads, rechecks and buttons work), never routed to. */
  private readonly retiredExplicit = new Map<string, PipelineConfig>();
  /** While a reload re-derives the groups: what each generated before, so only real changes are said. */
  private before?: ReadonlyMap<string, GeneratedPipeline>;

  constructor(
    public explicit: readonly PipelineConfig[],
    public templates: readonly PipelineTemplate[],
    private readonly events: CatalogEvents = {},
  ) {}

  /**
   * A reloaded config: its explicit pipelines and templates from now on. Every object seen so far
   * is grouped again by the new templates (a changed template refills its groups, so the next
   * fact routes by the new stages and selectors); a pipeline no longer listed retires (found by
   * name until its threads' TTL, as a generated pipeline whose last object is gone).
   */
  reconfigure(explicit: readonly PipelineConfig[], templates: readonly PipelineTemplate[]): void {
    const names = new Set(explicit.map((p) => p.name));
    for (const p of this.explicit) if (!names.has(p.name)) this.retiredExplicit.set(p.name, p);
    for (const name of names) this.retiredExplicit.delete(name);
    const before = new Map<string, GeneratedPipeline>();
    const members = new Map<string, GeneratedFrom>();
    for (const g of this.groups.values()) {
      if (g.generated) before.set(g.generated.pipeline.name, g.generated);
      for (const [key, o] of g.members) members.set(key, o);
    }
    this.explicit = explicit;
    this.templates = templates;
    this.groups.clear();
    this.memberOf.clear();
    this.lastSeen.clear();
    this.reported.clear();
    this.before = before;
    try {
      for (const o of members.values()) this.observe(o);
    } finally {
      this.before = undefined;
    }
    const now = new Set([...this.groups.values()].flatMap((g) => (g.generated ? [g.generated.pipeline.name] : [])));
    for (const [name, g] of before) {
      if (now.has(name)) continue;
      this.retired.set(name, g);
      this.events.retired?.(g);
      for (const listener of this.changeListeners) listener(g, 'retired');
    }
    this.adopt(this.lastShared);
  }

  /** Explicit pipelines, then generated ones by template order and name; an explicit pipeline wins over a generated one of its name. */
  pipelines(): PipelineConfig[] {
    return (this.listed ??= [...this.explicit, ...this.generatedPipelines().map((g) => g.pipeline)]);
  }

  /** The generated pipelines listed (not shadowed by an explicit one), with the template and group each came from. */
  generatedPipelines(): GeneratedPipeline[] {
    const names = new Set(this.explicit.map((p) => p.name));
    return [...[...this.groups.values()].flatMap((g) => (g.generated ? [g.generated] : [])), ...this.adopted.values()]
      .map((g) => ({ order: this.templates.findIndex((t) => t.name === g.template), g }))
      .sort((a, b) => a.order - b.order || (a.g.pipeline.name < b.g.pipeline.name ? -1 : a.g.pipeline.name > b.g.pipeline.name ? 1 : 0))
      .filter(({ g }) => !names.has(g.pipeline.name) && (names.add(g.pipeline.name), true))
      .map(({ g }) => g);
  }

  /**
   * The pipelines an object's facts may route to: the explicit ones and those of the object's own
   * groups (one pipeline per app: another app's pipeline never takes this app's facts, and
   * routing a fact costs the same with a thousand generated pipelines as with none).
   */
  pipelinesFor(o: GeneratedFrom, key = memberKey(o)): readonly PipelineConfig[] {
    const groups = this.memberOf.get(key);
    if (!groups) return this.explicit;
    const own: PipelineConfig[] = [];
    for (const groupKey of groups) {
      const p = this.groups.get(groupKey)?.generated?.pipeline;
      if (p && !this.explicit.some((e) => e.name === p.name)) own.push(p);
    }
    return own.length === 0 ? this.explicit : [...this.explicit, ...own];
  }

  /** A pipeline by name: listed ones first, then retired generated ones (their threads live on). */
  named(name: string): PipelineConfig | undefined {
    return this.pipelines().find((p) => p.name === name) ?? this.retired.get(name)?.pipeline ?? this.retiredExplicit.get(name);
  }

  /** Called with each pipeline this replica generates or changes, and each it retires: the shared record follows. */
  onChange(listener: (g: GeneratedPipeline, change: 'generated' | 'retired') => void): void {
    this.changeListeners.push(listener);
  }

  /**
   * The shared record's pipelines: those this replica has no group of are listed as if generated
   * here (a group seen here wins), retired ones found by name. Refilled from their template, so
   * a replica that never saw the objects (a writer, a Slack replica) has the same pipelines.
   */
  adopt(shared: ReadonlyMap<string, SharedPipeline>): void {
    this.lastShared = shared;
    const adopted = new Map<string, GeneratedPipeline>();
    for (const [name, s] of shared) {
      const t = this.templates.find((x) => x.name === s.template);
      if (!t) continue;
      const filled = instantiateTemplate(t, s.bindings, s.channel);
      if ('problems' in filled || filled.pipeline.name !== name) continue;
      const g: GeneratedPipeline = { pipeline: filled.pipeline, template: t.name, group: s.bindings.value, channelFrom: s.channelFrom, bindings: s.bindings };
      if (s.retiredAt === undefined) adopted.set(name, g);
      else if (!this.retired.has(name)) this.retired.set(name, g);
    }
    for (const g of this.groups.values()) if (g.generated) adopted.delete(g.generated.pipeline.name);
    this.adopted = adopted;
    this.listed = undefined;
  }

  /** Called with each generated pipeline whose channel is new to it (first generated, or its objects' annotation changed): Slack checks the channel. */
  onChannel(listener: (g: GeneratedPipeline) => void): void {
    this.channelListeners.push(listener);
  }

  /** Seen: the object joins (or, relabelled, leaves) its groups. Cheap when nothing changed, as on a heartbeat. */
  observe(o: GeneratedFrom, key = memberKey(o)): void {
    if (this.templates.length === 0) return;
    const tomb = this.tombstones.get(key);
    if (tomb) {
      if (isLate(o, tomb)) return;
      this.tombstones.delete(key);
    }
    const seen = this.lastSeen.get(key);
    if (seen && sameObject(seen, o)) return;
    const now = new Set<string>();
    for (const t of this.templates) {
      const b = bindingsOf(t, o);
      if (!b) continue;
      const name = generatedName(t, b);
      const groupKey = `${this.templates.indexOf(t)}\n${name}`;
      now.add(groupKey);
      let group = this.groups.get(groupKey);
      if (!group) this.groups.set(groupKey, (group = { template: t, name, members: new Map() }));
      const before = group.members.get(key);
      group.members.set(key, o);
      // A heartbeat or a status change: the same labels and annotations fill the same pipeline.
      if (!before || !sameObject(before, o)) this.refill(groupKey, group);
    }
    for (const groupKey of this.memberOf.get(key) ?? []) if (!now.has(groupKey)) this.leave(groupKey, key);
    if (now.size > 0) {
      this.memberOf.set(key, now);
      this.lastSeen.set(key, o);
    } else {
      this.memberOf.delete(key);
      this.lastSeen.delete(key);
    }
  }

  /** Gone (deleted, or missing from a relist): the object leaves its groups; a group's last object retires its pipeline. */
  forget(o: Pick<GeneratedFrom, 'kind' | 'cluster' | 'namespace' | 'name' | 'uid' | 'resourceVersion'>): void {
    const key = memberKey(o);
    if (o.uid !== undefined) {
      this.tombstones.delete(key);
      this.tombstones.set(key, { uid: o.uid, ...(o.resourceVersion !== undefined ? { resourceVersion: o.resourceVersion } : {}) });
      if (this.tombstones.size > TOMBSTONES) this.tombstones.delete(this.tombstones.keys().next().value!);
    }
    for (const groupKey of this.memberOf.get(key) ?? []) this.leave(groupKey, key);
    this.memberOf.delete(key);
    this.lastSeen.delete(key);
  }

  private leave(groupKey: string, key: string): void {
    const group = this.groups.get(groupKey);
    if (!group?.members.delete(key)) return;
    if (group.members.size > 0) return this.refill(groupKey, group);
    this.groups.delete(groupKey);
    this.listed = undefined;
    if (group.generated) {
      this.retired.set(group.generated.pipeline.name, group.generated);
      if (this.retired.size > RETIRED) this.retired.delete(this.retired.keys().next().value!);
      this.events.retired?.(group.generated);
      for (const listener of this.changeListeners) listener(group.generated, 'retired');
    }
  }

  /** The group's pipeline from its first object (key order) and its channel: the same objects give the same pipeline anywhere. */
  private refill(groupKey: string, group: Group): void {
    const keys = [...group.members.keys()].sort();
    const first = group.members.get(keys[0]!)!;
    const t = group.template;
    const { channel, channelFrom } = this.channelOf(t, keys.map((k) => group.members.get(k)!));
    const b = bindingsOf(t, first)!;
    // A reload re-derives every group: the pipeline it had before the reload is its previous one.
    const previous = group.generated ?? this.before?.get(generatedName(t, b));
    const filled = instantiateTemplate(t, b, channel);
    if ('problems' in filled) {
      this.reportOnce(`invalid\n${groupKey}`, 'invalid_pipeline', { template: t.name, group: b.value, object: memberKey(first), problems: filled.problems.map((p) => `${p.path.join('.')}: ${p.message}`) });
      delete group.generated;
    } else {
      if (previous && JSON.stringify(pipelineShape(previous.pipeline)) === JSON.stringify(pipelineShape(filled.pipeline))) {
        if (!group.generated) {
          group.generated = previous;
          this.listed = undefined;
        }
        return;
      }
      group.generated = { pipeline: filled.pipeline, template: t.name, group: b.value, channelFrom, bindings: plainBindings(b) };
      this.adopted.delete(filled.pipeline.name);
      this.retired.delete(filled.pipeline.name);
      if (this.explicit.some((p) => p.name === filled.pipeline.name)) {
        this.reportOnce(`shadowed\n${groupKey}`, 'shadowed', { template: t.name, group: b.value, pipeline: filled.pipeline.name });
      } else {
        if (!previous) this.events.generated?.(group.generated);
        if (previous?.pipeline.channel !== filled.pipeline.channel) for (const listener of this.channelListeners) listener(group.generated);
        for (const listener of this.changeListeners) listener(group.generated, 'generated');
      }
    }
    this.listed = undefined;
  }

  /** The first valid channel annotation among the group's objects (key order), else the template's channel. */
  private channelOf(t: PipelineTemplate, members: readonly GeneratedFrom[]): { channel: string; channelFrom: GeneratedPipeline['channelFrom'] } {
    for (const m of members) {
      const annotated = m.annotations[t.channelAnnotation];
      if (annotated === undefined) continue;
      if (channelId.safeParse(annotated).success) return { channel: annotated, channelFrom: 'annotation' };
      this.reportOnce(`channel\n${memberKey(m)}\n${annotated}`, 'invalid_channel', { template: t.name, object: memberKey(m), annotation: t.channelAnnotation, value: annotated.slice(0, 80) });
    }
    return { channel: t.channel, channelFrom: 'template' };
  }

  private reportOnce(key: string, reason: Parameters<NonNullable<CatalogEvents['problem']>>[0], detail: Record<string, unknown>): void {
    if (this.reported.has(key)) return;
    if (this.reported.size > TOMBSTONES) this.reported.clear();
    this.reported.add(key);
    this.events.problem?.(reason, detail);
  }
}

const CATALOG = Symbol('glidepath.pipelineCatalog');
type WithCatalog = ConfigFile & { [CATALOG]?: PipelineCatalog };

/**
 * The running config: the file's, with `pipelines` read from the catalog. Every reader of
 * `config.pipelines` (routing, the watch, commands, the writer) sees generated pipelines without
 * knowing about templates.
 */
export function withCatalog(config: ConfigFile, events: CatalogEvents = {}): ConfigFile {
  const explicit = catalogOf(config)?.explicit ?? config.pipelines;
  const catalog = new PipelineCatalog(explicit, config.pipelineTemplates, events);
  const live = { ...config } as WithCatalog;
  Object.defineProperty(live, 'pipelines', { get: () => catalog.pipelines(), enumerable: true });
  Object.defineProperty(live, CATALOG, { value: catalog, enumerable: false });
  return live;
}

export function catalogOf(config: ConfigFile): PipelineCatalog | undefined {
  return (config as WithCatalog)[CATALOG];
}

/** The pipelines the config file names itself (the watch's scopes come from these and the templates' generators). */
export function explicitPipelines(config: ConfigFile): readonly PipelineConfig[] {
  return catalogOf(config)?.explicit ?? config.pipelines;
}

/** A pipeline by name, retired generated ones included. */
export function pipelineNamed(config: ConfigFile, name: string): PipelineConfig | undefined {
  return catalogOf(config)?.named(name) ?? config.pipelines.find((p) => p.name === name);
}

/**
 * The annotations a release id is read from, for fact identity (a change of release id is a new
 * fact): the explicit pipelines' and the templates' (one with a placeholder is known per group only).
 */
export function releaseIdAnnotationsOf(config: ConfigFile): string[] {
  const fixed = config.pipelineTemplates.map((t) => t.releaseIdAnnotation).filter((a) => !a.includes('{{'));
  return [...new Set([...explicitPipelines(config).map((p) => p.releaseIdAnnotation), ...fixed])];
}

/** A pipeline by name; one not known here is looked up in the shared record first (the writer, a Slack replica). */
export async function pipelineNamedShared(config: ConfigFile, name: string): Promise<PipelineConfig | undefined> {
  const known = pipelineNamed(config, name);
  const catalog = catalogOf(config);
  if (known || !catalog?.remote) return known;
  await catalog.remote.refresh();
  return pipelineNamed(config, name);
}

/** The object a cluster fact reports on, as a generator sees it; undefined for the other facts. */
export function generatedFromFact(fact: Fact): GeneratedFrom | undefined {
  if (fact.kind !== 'rollout' && fact.kind !== 'application') return undefined;
  const { cluster, namespace, name } = fact.target;
  if (fact.kind === 'rollout') return { kind: 'Rollout', cluster, namespace, name, uid: fact.rollout.uid, resourceVersion: fact.rollout.resourceVersion, labels: fact.rollout.labels, annotations: fact.rollout.annotations };
  return { kind: 'Application', cluster, namespace, name, ...(fact.application.uid ? { uid: fact.application.uid } : {}), ...(fact.application.resourceVersion ? { resourceVersion: fact.application.resourceVersion } : {}), labels: fact.application.labels, annotations: fact.application.annotations };
}

/**
 * The pipelines a Rollout or Application fact is matched against (see PipelineCatalog.pipelinesFor),
 * once the catalog has seen its object: routing sees every cluster fact's object first, the one
 * place generated pipelines come from, for ingest, the watch and the worker.
 */
export function routablePipelines(config: ConfigFile, fact: Fact): readonly PipelineConfig[] {
  const catalog = catalogOf(config);
  const o = catalog && catalog.templates.length > 0 ? generatedFromFact(fact) : undefined;
  if (!o) return config.pipelines;
  const key = memberKey(o);
  catalog!.observe(o, key);
  return catalog!.pipelinesFor(o, key);
}
