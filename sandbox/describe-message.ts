/** Slack messages as plain terminal text, for the sandbox's transcript. */

function textOf(value: unknown): string {
  if (!value || typeof value !== 'object') return '';
  const v = value as { text?: unknown };
  return typeof v.text === 'string' ? v.text : '';
}

/** Mrkdwn to terminal: links as their label, entities decoded. */
function plain(mrkdwn: string): string {
  return mrkdwn
    .replace(/<([^|>]+)\|([^>]+)>/g, '$2')
    .replace(/<!date\^\d+\^[^|]*\|([^>]+)>/g, '$1')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

export function describeMessage(text: string, blocks: unknown[]): string {
  if (!Array.isArray(blocks) || blocks.length === 0) return plain(text);
  const lines: string[] = [];
  for (const block of blocks as Record<string, unknown>[]) {
    switch (block.type) {
      case 'header':
      case 'section':
        if (block.text) lines.push(plain(textOf(block.text)));
        for (const f of (block.fields as unknown[] | undefined) ?? []) lines.push(plain(textOf(f)));
        break;
      case 'context':
        lines.push(((block.elements as unknown[] | undefined) ?? []).map((e) => plain(textOf(e))).join('  '));
        break;
      case 'actions':
        lines.push(((block.elements as unknown[] | undefined) ?? []).map((e) => `[ ${textOf((e as { text?: unknown }).text)} ]`).join(' '));
        break;
      case 'divider':
        lines.push('—');
        break;
      default:
        break;
    }
  }
  return lines.filter(Boolean).join('\n');
}
