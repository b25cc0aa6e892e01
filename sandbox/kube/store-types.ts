/** The shapes of the stand-in object store's API: events, write/list/watch options, admission hooks. */
import type { KubeObject } from './object.js';
import type { ResourceType } from './resources.js';
import type { Clock } from './clock.js';
import type { ObjectStore } from './store.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  type: WatchEventType;
  rt: ResourceType;
  object: KubeObject;
  /** The object before this change (undefined for ADDED). */
  old?: KubeObject;
  rv: number;
}

export type PatchType = 'merge' | 'json';

export interface Caller {
  /** undefined = a controller inside the simulated cluster (not subject to RBAC). */
  user?: string;
  /** The caller's groups (impersonated ones included), for admission checks made as the caller. */
  groups?: string[];
}

export interface WriteOptions extends Caller {
  subresource?: 'status';
  /** `?dryRun=All`: admission and validation run, nothing is stored. */
  dryRun?: boolean;
  /** `?fieldValidation=`: unknown fields are dropped (Ignore), dropped with a warning (Warn, the default) or refused (Strict). */
  fieldValidation?: 'Ignore' | 'Warn' | 'Strict';
  /** Receives the warnings of this write (unknown fields under Warn). */
  warnings?: string[];
}

export interface AdmissionRequest extends Caller {
  operation: 'CREATE' | 'UPDATE' | 'DELETE';
  rt: ResourceType;
  /** Mutable: hooks may rewrite it (e.g. Kargo's Promotion naming). */
  object: KubeObject;
  old?: KubeObject;
  subresource?: 'status';
  store: ObjectStore;
}

/** Stands in for mutating and validating webhooks; throw an ApiError to deny. */
export type AdmissionHook = (request: AdmissionRequest) => void;

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
}

export interface ListResult {
  items: KubeObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface WatchOptions {
  resourceVersion?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export interface StoreOptions {
  clock?: Clock;
  /** Events kept for watch resumption; older resourceVersions get 410 Gone. */
  historyLimit?: number;
}
