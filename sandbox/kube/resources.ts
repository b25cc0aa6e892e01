/**
 * The resource types the stand-in serves: two core ones, and the custom resources described by the
 * CRD files shipped in `sandbox/kube/crds/` (names, scope, subresources, printer columns and schema come
 * from the CRD, so the stand-in follows the real definitions rather than our idea of them).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { compileSchema, type CompiledNode, type JsonSchema } from './schema.js';

export interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  description?: string;
  priority?: number;
}

export interface ScaleSubresource {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface ResourceType {
  group: string;
  version: string;
  plural: string;
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  hasStatus: boolean;
  scale?: ScaleSubresource;
  printerColumns: PrinterColumn[];
  /** Validates and prunes everything but `metadata`; undefined for core types we do not validate. */
  validate?: CompiledNode;
  /** The CRD's openAPIV3Schema, served in /openapi/v3. */
  schema?: JsonSchema;
}

export function apiVersionOf(rt: ResourceType): string {
  return rt.group === '' ? rt.version : `${rt.group}/${rt.version}`;
}

export function typeKey(rt: Pick<ResourceType, 'group' | 'plural'>): string {
  return `${rt.group}/${rt.plural}`;
}

const CORE: ResourceType[] = [
  {
    group: '',
    version: 'v1',
    plural: 'namespaces',
    singular: 'namespace',
    kind: 'Namespace',
    listKind: 'NamespaceList',
    namespaced: false,
    shortNames: ['ns'],
    categories: [],
    hasStatus: true,
    printerColumns: [{ name: 'Status', type: 'string', jsonPath: '.status.phase' }],
  },
  {
    group: '',
    version: 'v1',
    plural: 'events',
    singular: 'event',
    kind: 'Event',
    listKind: 'EventList',
    namespaced: true,
    shortNames: ['ev'],
    categories: [],
    hasStatus: false,
    printerColumns: [
      { name: 'Type', type: 'string', jsonPath: '.type' },
      { name: 'Reason', type: 'string', jsonPath: '.reason' },
      { name: 'Message', type: 'string', jsonPath: '.message' },
    ],
  },
];

interface CrdVersion {
  name: string;
  served?: boolean;
  storage?: boolean;
  schema?: { openAPIV3Schema?: JsonSchema };
  subresources?: { status?: object; scale?: ScaleSubresource };
  additionalPrinterColumns?: PrinterColumn[];
}

interface CrdDocument {
  kind: string;
  spec: {
    group: string;
    scope: 'Namespaced' | 'Cluster';
    names: { plural: string; singular?: string; kind: string; listKind?: string; shortNames?: string[]; categories?: string[] };
    versions: CrdVersion[];
  };
}

/** Validates everything except metadata, which has its own rules (see store.ts). */
function compileObjectSchema(schema: JsonSchema | undefined): CompiledNode {
  const node = compileSchema(schema ? { ...schema, properties: { ...schema.properties, metadata: { 'x-kubernetes-preserve-unknown-fields': true } } } : undefined);
  return node;
}

function resourceTypesFromCrd(doc: CrdDocument): ResourceType[] {
  const { group, scope, names, versions } = doc.spec;
  return versions
    .filter((v) => v.served !== false)
    .map((v) => ({
      group,
      version: v.name,
      plural: names.plural,
      singular: names.singular ?? names.kind.toLowerCase(),
      kind: names.kind,
      listKind: names.listKind ?? `${names.kind}List`,
      namespaced: scope === 'Namespaced',
      shortNames: names.shortNames ?? [],
      categories: names.categories ?? [],
      hasStatus: v.subresources?.status !== undefined,
      ...(v.subresources?.scale ? { scale: v.subresources.scale } : {}),
      printerColumns: v.additionalPrinterColumns ?? [],
      validate: compileObjectSchema(v.schema?.openAPIV3Schema),
      ...(v.schema?.openAPIV3Schema ? { schema: v.schema.openAPIV3Schema } : {}),
    }));
}

/** The CRDs the stand-in serves: `crds/` beside this file (the simulator is only run from source). */
export function defaultCrdDirectory(): string {
  const candidate = join(dirname(fileURLToPath(import.meta.url)), 'crds');
  if (existsSync(candidate)) return candidate;
  throw new Error(`${candidate} not found; set crdDirectory explicitly`);
}

const loaded = new Map<string, ResourceType[]>();

/**
 * Parsing 3 MB of YAML takes about half a second, so each directory is read once per process and
 * its compiled schemas are shared by every server started from it.
 */
function loadCustomTypes(directory: string): ResourceType[] {
  let types = loaded.get(directory);
  if (!types) {
    types = readCrdDocuments(directory)
      .filter((d) => d?.kind === 'CustomResourceDefinition')
      .flatMap(resourceTypesFromCrd);
    loaded.set(directory, types);
  }
  return types;
}

/**
 * The parsed CRDs, from a JSON cache in the temp directory keyed by the files' names, sizes and
 * times: JSON parses in a few milliseconds, the YAML in a second or more on a busy machine.
 */
function readCrdDocuments(directory: string): CrdDocument[] {
  const files = readdirSync(directory)
    .filter((f) => f.endsWith('.yaml') || f.endsWith('.yml'))
    .sort();
  const key = createHash('sha256')
    .update(JSON.stringify(files.map((f) => [f, statSync(join(directory, f)).size, statSync(join(directory, f)).mtimeMs])))
    .digest('hex')
    .slice(0, 16);
  const cacheDir = join(tmpdir(), 'glidepath-crd-cache');
  const cacheFile = join(cacheDir, `${key}.json`);
  try {
    return JSON.parse(readFileSync(cacheFile, 'utf8')) as CrdDocument[];
  } catch {
    // not cached yet (or unreadable): parse the YAML
  }
  const docs = files.map((f) => parse(readFileSync(join(directory, f), 'utf8')) as CrdDocument);
  try {
    mkdirSync(cacheDir, { recursive: true });
    writeFileSync(`${cacheFile}.${process.pid}`, JSON.stringify(docs));
    // Rename is atomic, so a concurrent reader never sees half a file.
    renameSync(`${cacheFile}.${process.pid}`, cacheFile);
  } catch {
    // a cache that cannot be written only costs time
  }
  return docs;
}

export class ResourceRegistry {
  readonly types: ResourceType[];

  constructor(crdDirectory: string = defaultCrdDirectory()) {
    this.types = [...CORE, ...loadCustomTypes(crdDirectory)];
  }

  find(group: string, version: string, plural: string): ResourceType | undefined {
    return this.types.find((t) => t.group === group && t.version === version && t.plural === plural);
  }

  /** For in-process callers (controllers, fixtures) that name a kind. */
  byKind(kind: string, group?: string): ResourceType {
    const rt = this.types.find((t) => t.kind === kind && (group === undefined || t.group === group));
    if (!rt) throw new Error(`no resource type for kind ${kind}`);
    return rt;
  }

  groups(): { name: string; versions: string[] }[] {
    const byGroup = new Map<string, string[]>();
    for (const t of this.types) {
      if (t.group === '') continue;
      const versions = byGroup.get(t.group) ?? [];
      if (!versions.includes(t.version)) versions.push(t.version);
      byGroup.set(t.group, versions);
    }
    return [...byGroup].map(([name, versions]) => ({ name, versions }));
  }
}
