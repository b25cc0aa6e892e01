/**
 * The subset of Kubernetes JSONPath used by CRD printer columns: `.a.b`, `.a[0].b`,
 * `.a[?(@.type=="Ready")].status`. Returns undefined when any step is missing.
 */
export function evaluateJsonPath(root: unknown, path: string): unknown {
  const tokens = path.match(/\.[^.[\]]+|\[\?\(@\.[^=]+==\s*["'][^"']*["']\s*\)\]|\[\d+\]/g) ?? [];
  let nodes: unknown[] = [root];
  for (const token of tokens) {
    const next: unknown[] = [];
    for (const node of nodes) {
      if (node === null || typeof node !== 'object') continue;
      if (token.startsWith('.')) {
        const v = (node as Record<string, unknown>)[token.slice(1)];
        if (v !== undefined) next.push(v);
      } else if (/^\[\d+\]$/.test(token)) {
        const v = Array.isArray(node) ? node[Number(token.slice(1, -1))] : undefined;
        if (v !== undefined) next.push(v);
      } else {
        const m = /^\[\?\(@\.([^=]+?)\s*==\s*["']([^"']*)["']\s*\)\]$/.exec(token);
        if (m && Array.isArray(node)) {
          for (const item of node) {
            if (item && typeof item === 'object' && String((item as Record<string, unknown>)[m[1]!]) === m[2]) next.push(item);
          }
        }
      }
    }
    nodes = next;
  }
  return nodes[0];
}
