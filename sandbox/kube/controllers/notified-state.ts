/**
 * The notifications engine's "already notified" state, kept where the engine keeps it: the
 * object's `notified.notifications.argoproj.io` annotation, a JSON map of key → unix seconds
 * (notifications-engine pkg/controller/state.go). A key is
 * `[<oncePer value>:]<trigger>:[<condition index>].<base64url(sha1(when))>:<service>:<recipient>`.
 * Keys with an oncePer value are never removed, which is why the annotation grows under a
 * heartbeat trigger until something prunes it; removing the annotation makes every true
 * condition send again.
 */
import { createHash } from 'node:crypto';
import type { KubeObject } from '../object.js';

export const NOTIFIED_ANNOTATION = 'notified.notifications.argoproj.io';

export type NotifiedState = Map<string, number>;

export function readNotified(obj: KubeObject): NotifiedState {
  const raw = obj.metadata.annotations?.[NOTIFIED_ANNOTATION];
  if (!raw) return new Map();
  try {
    const parsed = JSON.parse(raw) as Record<string, unknown>;
    return new Map(Object.entries(parsed).filter((e): e is [string, number] => typeof e[1] === 'number'));
  } catch {
    // The engine starts from empty state when the annotation does not parse.
    return new Map();
  }
}

/** Writes the state into a copy of the object's metadata (the annotation goes when the state is empty). */
export function writeNotified(obj: KubeObject, state: NotifiedState): void {
  const annotations = { ...(obj.metadata.annotations ?? {}) };
  if (state.size === 0) delete annotations[NOTIFIED_ANNOTATION];
  else annotations[NOTIFIED_ANNOTATION] = JSON.stringify(Object.fromEntries(state));
  obj.metadata.annotations = annotations;
}

export function notifiedKey(trigger: string, when: string, destination: string, oncePer?: string): string {
  const hash = createHash('sha1').update(when).digest('base64url');
  return `${oncePer !== undefined ? `${oncePer}:` : ''}${trigger}:[0].${hash}:${destination}`;
}
