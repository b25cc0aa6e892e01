/**
 * An ApplicationSet's kept state (appset-memberships.ts) as hash fields: `state` without the
 * members, and the members (thousands) in chunks `m0`, `m1`, … (record-chunks.ts), `n` of them,
 * so a status write that moves 50 children rewrites the chunks that hold them. A hash written
 * before holds the members in `state`, and still reads back.
 */
import type { AppSetMemberState, AppSetState } from './appset-record.js';
import { decodeChunks, encodeChunks } from './record-chunks.js';

/** An ApplicationSet's members as chunks (record-chunks.ts), in order: here and in a release record (record-codec.ts). */
export function encodeMembers(members: AppSetState['members']): string[] {
  return encodeChunks(Object.entries(members), ([name]) => name);
}

/** The members back from chunks `${prefix}0`, `${prefix}1`, … (at most `max`), with the chunks read; undefined when there is none. */
export function decodeMembers(fields: ReadonlyMap<string, string>, prefix: string, max?: number): { members: AppSetState['members']; chunks: string[] } | undefined {
  const decoded = decodeChunks<[string, AppSetMemberState]>(fields, prefix, max);
  return decoded && { members: Object.fromEntries(decoded.items), chunks: decoded.jsons };
}

export function encodeMembership(state: AppSetState): { head: string; chunks: string[] } {
  const { members, ...head } = state;
  return { head: JSON.stringify(head), chunks: encodeMembers(members) };
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
