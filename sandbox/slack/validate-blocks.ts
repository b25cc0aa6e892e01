/** Slack's checks on message size and block shape, as documented (and as observed for ~12k total text). */

const STAND_IN_TOTAL_TEXT_LIMIT = 12_000;

type Problem = 'invalid_blocks' | 'msg_blocks_too_long' | 'msg_too_long' | 'no_text';

function textOf(value: unknown): string[] {
  if (value === null || typeof value !== 'object') return [];
  if (Array.isArray(value)) return value.flatMap(textOf);
  const out: string[] = [];
  for (const [k, v] of Object.entries(value)) {
    if (k === 'text' && typeof v === 'string') out.push(v);
    else out.push(...textOf(v));
  }
  return out;
}

export function checkMessage(text: string | undefined, blocks: unknown, maxBlocks = 50): Problem | undefined {
  if (text !== undefined && text.length > 40_000) return 'msg_too_long';
  if (blocks === undefined) return text ? undefined : 'no_text';
  if (!Array.isArray(blocks) || blocks.length > maxBlocks) return 'invalid_blocks';
  for (const b of blocks as Record<string, unknown>[]) {
    if (b === null || typeof b !== 'object' || typeof b.type !== 'string') return 'invalid_blocks';
    const t = b.text as { text?: unknown } | undefined;
    if (b.type === 'section' && typeof t?.text === 'string' && t.text.length > 3000) return 'invalid_blocks';
    if (b.type === 'header' && typeof t?.text === 'string' && t.text.length > 150) return 'invalid_blocks';
    if (b.type === 'actions') {
      for (const e of (b.elements as Record<string, unknown>[] | undefined) ?? []) {
        if (typeof e.value === 'string' && e.value.length > 2000) return 'invalid_blocks';
        if (typeof e.action_id === 'string' && e.action_id.length > 255) return 'invalid_blocks';
      }
    }
  }
  const total = textOf(blocks).reduce((n, s) => n + s.length, 0);
  if (total > STAND_IN_TOTAL_TEXT_LIMIT) return 'msg_blocks_too_long';
  return undefined;
}
