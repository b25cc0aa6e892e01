/**
 * Glidepath declining to act is an expected answer, not a failure: the object is not in the state
 * the action needs (the button is stale, the step is not waiting, the Freight is not available).
 * Operations that can refuse return it as a value, with typed details the caller may act on;
 * exceptions (KubeActionError) stay for what goes wrong: the network, RBAC, conflicts, 5xx.
 */
import type { KubeCall } from './errors.js';

export interface Refused<D> {
  kind: 'refused';
  /** The sentence a person reads; it says whether anything was changed. */
  reason: string;
  call: KubeCall;
  details: D;
}

/** The operation ran: its result, marked so that `kind` tells it from a refusal. */
export type Done<T> = T & { kind: 'done' };

export type Refusable<T, D> = Done<T> | Refused<D>;

export function refused<D>(reason: string, call: KubeCall, details: D): Refused<D> {
  return { kind: 'refused', reason, call, details };
}

export function done<T extends object>(result: T): Done<T> {
  return { ...result, kind: 'done' };
}
