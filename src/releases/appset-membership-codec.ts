/**
 * An ApplicationSet's kept state (appset-memberships.ts) as hash fields: `state` without the
 * members, and the members (thousands) in chunks `m0`, `m1`, … (record-chunks.ts), `n` of them,
 * so a status write that moves 50 children rewrites the chunks that hold them. A hash written
 * before holds the members in `state`, and still reads back.
 */
import type { AppSetMemberState, AppSetState } from './appset-record.js';
import { decodeChunks, encodeChunks } from './record-chunks.js';

export function encodeMembership(state: AppSetState): { head: string; chunks: string[] } {
  const { members, ...head } = state;
  return { head: JSON.stringify(head), chunks: encodeChunks(Object.entries(members), ([name]) => name) };
}

/** The state a hash holds and its observation (`v`), with its member chunks (none in the old layout). */
export function decodeMembership(hash: Record<string, string>): { observation: string; state: AppSetState; chunks?: string[] } | undefined {
  const { v, state: json } = hash;
  if (!v || !json) return undefined;
  const state = JSON.parse(json) as Omit<AppSetState, 'members'> & { members?: AppSetState['members'] };
  if (state.members !== undefined) return { observation: v, state: state as AppSetState };
  const fields = new Map(Object.entries(hash));
  const count = Number(hash.n ?? 0);
  const decoded = decodeChunks<[string, AppSetMemberState]>(fields, 'm');
  const chunks = (decoded?.jsons ?? []).slice(0, count);
  const members = Object.fromEntries(chunks.flatMap((c) => JSON.parse(c) as [string, AppSetMemberState][]));
  return { observation: v, state: { ...state, members }, chunks };
}
