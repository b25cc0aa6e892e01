/**
 * The object store behind the stand-in API server: one global, monotonically increasing
 * resourceVersion, generation bumps on spec changes only, status-subresource isolation,
 * resourceVersion preconditions, schema validation, and a bounded event history for watches.
 * The HTTP layer and the in-process controller simulators both write through it, so a
 * controller's status write and a user's patch race exactly as they would on a real cluster.
 */
import { randomUUID } from 'node:crypto';
import { isoSeconds, realClock, type Clock } from './clock.js';
import { alreadyExists, ApiError, badRequest, conflict, gone, invalid, notFound, type StatusCause } from './errors.js';
import { decodeContinue, encodeContinue } from './continue-token.js';
import type { ParsedSelector } from './label-selector.js';
import { checkMetadata, randomSuffix } from './object-meta.js';
import type { KubeObject, ObjectMeta } from './object.js';
import { UNKNOWN_FIELD } from './schema.js';
import { canonical, jsonPatch, mergePatch } from './patch.js';
import { apiVersionOf, typeKey, type ResourceRegistry, type ResourceType } from './resources.js';
import { EXTRA_FIELDS, matchesSelectors, parseFields, parseLabels, type FieldRequirement } from './selectors.js';
import type { AdmissionHook, AdmissionRequest, Caller, ListOptions, ListResult, PatchType, StoreEvent, StoreOptions, WatchEventType, WatchOptions, WriteOptions } from './store-types.js';

export type * from './store-types.js';

function clone<T>(value: T): T {
  return structuredClone(value);
}

function objectKey(namespace: string | undefined, name: string): string {
  return `${namespace ?? ''}/${name}`;
}

function withoutVolatileMeta(obj: KubeObject): unknown {
  const { resourceVersion: _rv, managedFields: _mf, ...meta } = obj.metadata;
  return canonical({ ...obj, metadata: meta });
}

/** What counts as "spec" for metadata.generation: everything but metadata (and status when it is a subresource). */
function generationPart(rt: ResourceType, obj: KubeObject): string {
  const { metadata: _m, status, ...rest } = obj;
  return JSON.stringify(canonical(rt.hasStatus ? rest : { ...rest, status }));
}

export class ObjectStore {
  readonly clock: Clock;
  private rv = 1;
  private readonly objects = new Map<string, Map<string, KubeObject>>();
  private readonly history: StoreEvent[] = [];
  /** Highest resourceVersion whose event was dropped from history. */
  private compactedThrough = 0;
  private readonly historyLimit: number;
  private readonly listeners = new Set<(event: StoreEvent) => void>();
  private readonly admission: { key: string; hook: AdmissionHook }[] = [];

  constructor(
    readonly registry: ResourceRegistry,
    options: StoreOptions = {},
  ) {
    this.clock = options.clock ?? realClock;
    this.historyLimit = options.historyLimit ?? 10_000;
  }

  resourceVersion(): string {
    return String(this.rv);
  }

  /** Registers a webhook stand-in for one resource type (`group/plural`). */
  addAdmissionHook(rt: Pick<ResourceType, 'group' | 'plural'>, hook: AdmissionHook): void {
    this.admission.push({ key: typeKey(rt), hook });
  }

  /** Every committed change, synchronously, in resourceVersion order (for controllers and watches). */
  subscribe(listener: (event: StoreEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Forgets the watch history, as etcd compaction does: watches from older versions then get 410. */
  compact(): void {
    this.compactedThrough = this.rv;
    this.history.length = 0;
  }

  private bucket(rt: ResourceType): Map<string, KubeObject> {
    const key = typeKey(rt);
    let bucket = this.objects.get(key);
    if (!bucket) {
      bucket = new Map();
      this.objects.set(key, bucket);
    }
    return bucket;
  }

  private scopeNamespace(rt: ResourceType, namespace: string | undefined): string | undefined {
    return rt.namespaced ? namespace : undefined;
  }

  private current(rt: ResourceType, namespace: string | undefined, name: string): KubeObject {
    const obj = this.bucket(rt).get(objectKey(this.scopeNamespace(rt, namespace), name));
    if (!obj) throw notFound(rt.plural, rt.group, name);
    return obj;
  }

  tryGet(rt: ResourceType, namespace: string | undefined, name: string): KubeObject | undefined {
    const obj = this.bucket(rt).get(objectKey(this.scopeNamespace(rt, namespace), name));
    return obj ? clone(obj) : undefined;
  }

  get(rt: ResourceType, namespace: string | undefined, name: string): KubeObject {
    return clone(this.current(rt, namespace, name));
  }

  list(rt: ResourceType, namespace: string | undefined, options: ListOptions = {}): ListResult {
    const labels = parseLabels(options.labelSelector);
    const fields = parseFields(options.fieldSelector, EXTRA_FIELDS[typeKey(rt)]);
    let start = '';
    if (options.continue) {
      const token = decodeContinue(options.continue);
      if (token.rv <= this.compactedThrough) {
        throw gone('The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.');
      }
      start = token.start;
    }
    const ns = this.scopeNamespace(rt, namespace);
    const all = [...this.bucket(rt).entries()]
      .filter(([key, obj]) => key > start && (ns === undefined || obj.metadata.namespace === ns))
      .filter(([, obj]) => matchesSelectors(obj, labels, fields))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const limit = options.limit && options.limit > 0 ? options.limit : all.length;
    const page = all.slice(0, limit);
    const result: ListResult = { items: page.map(([, o]) => clone(o)), resourceVersion: this.resourceVersion() };
    if (all.length > limit) {
      result.continue = encodeContinue({ rv: this.rv, start: page[page.length - 1]![0] });
      result.remainingItemCount = all.length - limit;
    }
    return result;
  }

  create(rt: ResourceType, namespace: string | undefined, body: KubeObject, options: WriteOptions = {}): KubeObject {
    if (options.subresource) throw new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
    const obj = clone(body);
    obj.apiVersion = apiVersionOf(rt);
    obj.kind = rt.kind;
    obj.metadata = { ...(obj.metadata ?? {}) } as ObjectMeta;
    const ns = this.scopeNamespace(rt, namespace ?? obj.metadata.namespace);
    if (rt.namespaced) {
      if (!ns) throw badRequest('the server could not find the requested resource: a namespace is required');
      if (obj.metadata.namespace && obj.metadata.namespace !== ns) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      obj.metadata.namespace = ns;
      const nsType = this.registry.find('', 'v1', 'namespaces')!;
      if (!this.bucket(nsType).has(objectKey(undefined, ns))) throw notFound('namespaces', '', ns);
    } else {
      delete obj.metadata.namespace;
    }
    if (obj.metadata.resourceVersion) {
      throw invalid(rt.kind, rt.group, obj.metadata.name ?? '', [
        { reason: 'FieldValueInvalid', field: 'metadata.resourceVersion', message: `Invalid value: ${JSON.stringify(obj.metadata.resourceVersion)}: must be empty` },
      ]);
    }
    if (!obj.metadata.name && obj.metadata.generateName) obj.metadata.name = obj.metadata.generateName + randomSuffix();
    if (rt.hasStatus) delete obj.status;
    if (rt.group === '' && rt.plural === 'namespaces') obj.status = { phase: 'Active' };
    this.runAdmission({ operation: 'CREATE', rt, object: obj, user: options.user, groups: options.groups, store: this });
    const name = obj.metadata.name;
    if (!name) {
      throw invalid(rt.kind, rt.group, '', [{ reason: 'FieldValueRequired', field: 'metadata.name', message: 'Required value: name or generateName is required' }]);
    }
    const bucket = this.bucket(rt);
    if (bucket.has(objectKey(ns, name))) throw alreadyExists(rt.plural, rt.group, name);
    const stored = this.validated(rt, obj, options);
    const meta = stored.metadata;
    meta.uid = randomUUID();
    meta.creationTimestamp = isoSeconds(this.clock.now());
    meta.generation = 1;
    delete meta.deletionTimestamp;
    if (options.dryRun) return clone(stored);
    this.commit(rt, 'ADDED', stored, undefined);
    return clone(stored);
  }

  /** PUT: replaces the object (or only its status with subresource 'status'). */
  update(rt: ResourceType, namespace: string | undefined, name: string, body: KubeObject, options: WriteOptions = {}): KubeObject {
    const old = this.current(rt, namespace, name);
    if (body?.metadata?.name && body.metadata.name !== name) {
      throw badRequest(`the name of the object (${body.metadata.name}) does not match the name on the URL (${name})`);
    }
    return this.write(rt, old, clone(body), options);
  }

  patch(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    type: PatchType,
    patch: unknown,
    options: WriteOptions = {},
  ): KubeObject {
    const old = this.current(rt, namespace, name);
    // Applied to the current object, resourceVersion included: a patch that sets another
    // resourceVersion fails the precondition (409), and a JSON patch can `test` it.
    const base = clone(old);
    const patched = (type === 'merge' ? mergePatch(base, patch) : jsonPatch(base, patch)) as KubeObject;
    if (typeof patched !== 'object' || patched === null || Array.isArray(patched)) throw badRequest('patch produced a non-object');
    return this.write(rt, old, patched, options);
  }

  /** Read-modify-write for in-process controllers: `change` edits a copy; a no-op change writes nothing. */
  mutate(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    change: (obj: KubeObject) => void,
    options: WriteOptions = {},
  ): KubeObject {
    const copy = clone(this.current(rt, namespace, name));
    change(copy);
    return this.update(rt, namespace, name, copy, options);
  }

  delete(rt: ResourceType, namespace: string | undefined, name: string, options: Caller & { resourceVersion?: string; dryRun?: boolean } = {}): KubeObject {
    const old = this.current(rt, namespace, name);
    if (options.resourceVersion && options.resourceVersion !== old.metadata.resourceVersion) {
      throw conflict(rt.plural, rt.group, name);
    }
    this.runAdmission({ operation: 'DELETE', rt, object: clone(old), old: clone(old), user: options.user, groups: options.groups, store: this });
    if (options.dryRun) return clone(old);
    this.bucket(rt).delete(objectKey(this.scopeNamespace(rt, namespace), name));
    const gone = clone(old);
    gone.metadata.deletionTimestamp = isoSeconds(this.clock.now());
    this.commit(rt, 'DELETED', gone, old);
    this.collectGarbage(old.metadata.uid);
    return clone(gone);
  }

  /** Background cascading deletion of dependents, as the garbage collector does. */
  private collectGarbage(ownerUid: string | undefined): void {
    if (!ownerUid) return;
    for (const rt of this.registry.types) {
      for (const obj of [...this.bucket(rt).values()]) {
        if (obj.metadata.ownerReferences?.some((o) => o.uid === ownerUid)) {
          this.delete(rt, obj.metadata.namespace, obj.metadata.name);
        }
      }
    }
  }

  private write(rt: ResourceType, old: KubeObject, candidate: KubeObject, options: WriteOptions): KubeObject {
    const name = old.metadata.name;
    const precondition = candidate.metadata?.resourceVersion;
    if (precondition !== undefined && precondition !== '' && precondition !== old.metadata.resourceVersion) {
      throw conflict(rt.plural, rt.group, name);
    }
    let next: KubeObject;
    if (options.subresource === 'status') {
      if (!rt.hasStatus) throw notFound(rt.plural, rt.group, name);
      next = clone(old);
      if (candidate.status === undefined) delete next.status;
      else next.status = candidate.status;
    } else {
      const meta = { ...(candidate.metadata ?? {}) } as ObjectMeta;
      next = { ...candidate, apiVersion: apiVersionOf(rt), kind: rt.kind, metadata: meta };
      // Server-owned metadata cannot be changed by a client.
      meta.name = name;
      if (old.metadata.namespace) meta.namespace = old.metadata.namespace;
      meta.uid = old.metadata.uid;
      meta.creationTimestamp = old.metadata.creationTimestamp;
      meta.generation = old.metadata.generation;
      if (rt.hasStatus) {
        if (old.status === undefined) delete next.status;
        else next.status = clone(old.status);
      }
    }
    this.runAdmission({ operation: 'UPDATE', rt, object: next, old: clone(old), subresource: options.subresource, user: options.user, groups: options.groups, store: this });
    const stored = this.validated(rt, next, options);
    stored.metadata.resourceVersion = old.metadata.resourceVersion;
    if (generationPart(rt, stored) !== generationPart(rt, old)) stored.metadata.generation = (old.metadata.generation ?? 0) + 1;
    if (JSON.stringify(withoutVolatileMeta(stored)) === JSON.stringify(withoutVolatileMeta(old))) return clone(old);
    if (options.dryRun) return clone(stored);
    this.commit(rt, 'MODIFIED', stored, old);
    return clone(stored);
  }

  private runAdmission(request: AdmissionRequest): void {
    const key = typeKey(request.rt);
    for (const a of this.admission) if (a.key === key) a.hook(request);
  }

  private validated(rt: ResourceType, obj: KubeObject, options: WriteOptions = {}): KubeObject {
    const all: StatusCause[] = [];
    checkMetadata(obj.metadata, all);
    let out = obj;
    if (rt.validate) {
      out = rt.validate(obj, '', all) as KubeObject;
      out.metadata = obj.metadata;
    }
    const unknown = all.filter((c) => c.reason === UNKNOWN_FIELD).map((c) => `unknown field "${c.field}"`);
    const causes = all.filter((c) => c.reason !== UNKNOWN_FIELD);
    if (causes.length > 0) throw invalid(rt.kind, rt.group, obj.metadata.name ?? '', causes);
    if (unknown.length > 0 && options.fieldValidation === 'Strict') {
      throw badRequest(`${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: strict decoding error: ${unknown.join(', ')}`);
    }
    if (unknown.length > 0 && options.fieldValidation !== 'Ignore') options.warnings?.push(...unknown);
    return out;
  }

  private commit(rt: ResourceType, type: WatchEventType, obj: KubeObject, old: KubeObject | undefined): void {
    this.rv += 1;
    obj.metadata.resourceVersion = String(this.rv);
    if (type !== 'DELETED') this.bucket(rt).set(objectKey(obj.metadata.namespace, obj.metadata.name), obj);
    const event: StoreEvent = { type, rt, object: obj, rv: this.rv, ...(old ? { old } : {}) };
    this.history.push(event);
    if (this.history.length > this.historyLimit) {
      const dropped = this.history.shift()!;
      this.compactedThrough = dropped.rv;
    }
    for (const listener of [...this.listeners]) listener(event);
  }

  /**
   * Starts a watch. Events already in history after `resourceVersion` are delivered first; with no
   * resourceVersion (or "0") the current objects arrive as synthetic ADDED events. Throws 410 when
   * the version has been compacted away.
   */
  watch(
    rt: ResourceType,
    namespace: string | undefined,
    options: WatchOptions,
    deliver: (type: WatchEventType, object: KubeObject) => void,
  ): () => void {
    const labels: ParsedSelector | undefined = parseLabels(options.labelSelector);
    const fields: FieldRequirement[] = parseFields(options.fieldSelector, EXTRA_FIELDS[typeKey(rt)]);
    const ns = this.scopeNamespace(rt, namespace);
    const key = typeKey(rt);
    // As the API server's watch cache does: an object modified into the selection is ADDED to the
    // watch, one modified out of it is DELETED from it (with its new state).
    const translate = (e: StoreEvent): WatchEventType | undefined => {
      if (typeKey(e.rt) !== key || (ns !== undefined && e.object.metadata.namespace !== ns)) return undefined;
      const now = matchesSelectors(e.object, labels, fields);
      const before = e.type === 'MODIFIED' && e.old ? matchesSelectors(e.old, labels, fields) : now;
      if (now) return before ? e.type : 'ADDED';
      return before && e.type === 'MODIFIED' ? 'DELETED' : undefined;
    };
    const from = options.resourceVersion;
    if (from === undefined || from === '' || from === '0') {
      for (const obj of this.list(rt, ns, { labelSelector: options.labelSelector, fieldSelector: options.fieldSelector }).items) {
        deliver('ADDED', obj);
      }
    } else {
      const since = Number(from);
      if (!Number.isInteger(since)) throw badRequest(`invalid resource version "${from}"`);
      if (since < this.compactedThrough) throw gone(`too old resource version: ${since} (${this.compactedThrough + 1})`);
      for (const e of this.history) {
        const type = e.rv > since ? translate(e) : undefined;
        if (type) deliver(type, clone(e.object));
      }
    }
    const listener = (e: StoreEvent): void => {
      const type = translate(e);
      if (type) deliver(type, clone(e.object));
    };
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
