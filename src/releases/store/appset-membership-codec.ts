/**
 * An ApplicationSet's kept state (appset-memberships.ts) as hash fields: `state` without the
 * members, and the members (thousands) in chunks `m0`, `m1`, … (record-chunks.ts), `n` of them,
 * so a status write that moves 50 children rewrites the chunks that hold them. A hash written
 * before holds the members in `state`, and still reads back.
 */
import type { AppSetMemberState, AppSetState } from '../record/appset-record.js';
import { decodeChunks, encodeChunksAfter, type Chunked } from './record-chunks.js';

type MemberEntry = [string, AppSetMemberState];

/**
 * Encodings of members, by members object: one state is kept beside the records and in them
 * (appset-known.ts' appSetStateOf), and its thousands of members are encoded once for both, and
 * from the encoding of the state it follows (a status write changes a few chunks). States are
 * never changed in place.
 */
const membersJson = new WeakMap<AppSetState['members'], Chunked<MemberEntry>>();

/** Two entries that encode to the same JSON (appSetStateOf builds every entry with its fields in one order). */
function sameEntry([name, a]: MemberEntry, [other, b]: MemberEntry): boolean {
  if (name !== other) return false;
  if (a === b) return true;
  if (a.status !== b.status || a.step !== b.step || a.message !== b.message || a.since !== b.since) return false;
  if ('message' in a !== 'message' in b || 'since' in a !== 'since' in b) return false;
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  if (keysA.length !== keysB.length || keysA.some((k, i) => k !== keysB[i])) return false;
  const ra = a.targetRevisions;
  const rb = b.targetRevisions;
  return ra.length === rb.length && ra.every((r, i) => r === rb[i]);
}

/**
 * An ApplicationSet's members as chunks (record-chunks.ts), in order: here and in a release record
 * (record-codec.ts). `previous`: the members of the state these replace, when known.
 */
export function encodeMembers(members: AppSetState['members'], previous?: AppSetState['members']): string[] {
  let chunked = membersJson.get(members);
  if (!chunked) {
    const before = previous === undefined ? undefined : membersJson.get(previous);
    membersJson.set(members, (chunked = encodeChunksAfter(Object.entries(members), ([name]) => name, before, sameEntry)));
  }
  return chunked.jsons;
}

/** The members back from chunks `${prefix}0`, `${prefix}1`, … (at most `max`), with the chunks read; undefined when there is none. */
export function decodeMembers(fields: ReadonlyMap<string, string>, prefix: string, max?: number): { members: AppSetState['members']; chunks: string[] } | undefined {
  const decoded = decodeChunks<[string, AppSetMemberState]>(fields, prefix, max);
  return decoded && { members: Object.fromEntries(decoded.items), chunks: decoded.jsons };
}

/** `previous`: the state this one replaces, when known (its members' encoding is reused where they did not change). */
export function encodeMembership(state: AppSetState, previous?: AppSetState): { head: string; chunks: string[] } {
  const { members, ...head } = state;
  return { head: JSON.stringify(head), chunks: encodeMembers(members, previous?.members) };
}

/** The state a hash holds and its observation (`v`), with its member chunks (none in the old layout). */
export function decodeMembership(hash: Record<string, string>): { observation: string; state: AppSetState; chunks?: string[] } | undefined {
  const { v, state: json } = hash;
  if (!v || !json) return undefined;
  const state = JSON.parse(json) as Omit<AppSetState, 'members'> & { members?: AppSetState['members'] };
  if (state.members !== undefined) return { observation: v, state: state as AppSetState };
  const decoded = decodeMembers(new Map(Object.entries(hash)), 'm', Number(hash.n ?? 0));
  return { observation: v, state: { ...state, members: decoded?.members ?? {} }, chunks: decoded?.chunks ?? [] };
}
