/**
 * Following one object by name on a watch until what the caller reads from it is final: the one
 * loop behind `followPromotion` (a Promotion's phase, kargo.ts) and `followPromotionRequest` (a
 * PromotionRequest's phase in its Stage's status, kargo-requests.ts). Read once, then watched
 * from that resourceVersion; when the server ends the watch (as API servers do every few
 * minutes) it is started again from the last version seen; when that version is gone (410, after
 * etcd compaction: a long Promotion outlives it) the object is read again and watched from there.
 * It ends on a final state, on the object's deletion (an error), on another watch error, or at
 * the timeout (`timedOut`).
 */
import type { z } from 'zod';
import type { KubeApi } from './api.js';
import { KubeActionError } from './errors.js';
import { getTyped } from './reads.js';
import type { ResourceRef } from './resources.js';

/** A schema of an object read from a cluster: it carries the resourceVersion a watch resumes from. */
type ClusterObjectSchema = z.ZodType<{ metadata: { resourceVersion: string } }>;

export interface FollowObjectSpec<T extends ClusterObjectSchema> {
  resource: ResourceRef;
  schema: T;
  namespace: string;
  name: string;
  /** What is followed, read from the object (a phase); undefined while the object says nothing yet. */
  read: (object: z.infer<T>) => string | undefined;
  /** Whether a state read ends the following. */
  isFinal: (state: string) => boolean;
  /** The not-found error's message when the object is deleted before a final state. */
  deletedMessage: string;
  timeoutMs: number;
  /** Hears the first state read and every change after it. */
  onChange?: (state: string, object: z.infer<T>) => void;
}

export interface FollowedObject<O> {
  /** The object as last seen. */
  object: O;
  /** The last state read, if any. */
  state?: string;
  timedOut: boolean;
}

export async function followObject<T extends ClusterObjectSchema>(api: KubeApi, spec: FollowObjectSpec<T>): Promise<FollowedObject<z.infer<T>>> {
  const { resource, schema, namespace, name, read, isFinal, onChange } = spec;
  let object: z.infer<T> = await getTyped(api, resource, schema, namespace, name);
  let state = read(object);
  if (state) onChange?.(state, object);
  if (state && isFinal(state)) return { object, state, timedOut: false };
  let lastVersion = object.metadata.resourceVersion;
  return new Promise<FollowedObject<z.infer<T>>>((resolve, reject) => {
    let settled = false;
    let stop: (() => void) | undefined;
    const finish = (timedOut: boolean, error?: unknown): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      stop?.();
      if (error) reject(error);
      else resolve({ object, ...(state ? { state } : {}), timedOut });
    };
    const deadline = setTimeout(() => finish(true), spec.timeoutMs);
    const heard = (next: z.infer<T>): void => {
      object = next;
      lastVersion = object.metadata.resourceVersion;
      const now = read(object);
      if (now && now !== state) {
        state = now;
        onChange?.(now, object);
      }
      if (state && isFinal(state)) finish(false);
    };
    /** The version to resume from is gone: read the object again (what changed meanwhile is in it) and watch from there. */
    const gone = (err: unknown): boolean => err instanceof KubeActionError && err.status === 410;
    const failed = (err: unknown): void => {
      if (settled) return;
      if (!gone(err)) return finish(false, err);
      getTyped(api, resource, schema, namespace, name).then(
        (fresh) => {
          if (settled) return;
          heard(fresh);
          if (!settled) start();
        },
        (readError: unknown) => finish(false, readError instanceof KubeActionError && readError.kind === 'not-found' ? new KubeActionError('not-found', spec.deletedMessage) : readError),
      );
    };
    const start = (): void => {
      api
        .watch(resource, namespace, { resourceVersion: lastVersion, fieldSelector: `metadata.name=${name}` }, (type, raw) => {
          if (type === 'DELETED') return finish(false, new KubeActionError('not-found', spec.deletedMessage));
          if (type !== 'ADDED' && type !== 'MODIFIED') return;
          const parsed = schema.safeParse(raw);
          if (parsed.success) heard(parsed.data);
        })
        .then((handle) => {
          stop = handle.stop;
          if (settled) handle.stop();
          handle.done.then(
            () => {
              if (!settled) start();
            },
            failed,
          );
        })
        .catch(failed);
    };
    start();
  });
}
