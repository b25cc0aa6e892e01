/**
 * Renders the subset of Go text/template (with sprig's toJson and omit) that our notification
 * templates use, the way the notifications engine would. Anything outside the subset throws,
 * so a template edit that this cannot check fails the test instead of passing silently.
 */

type Scope = { root: any; vars: Record<string, any> };

/** Go's json.Marshal of a map: keys sorted, compact, <>& escaped. */
export function goJson(value: unknown): string {
  const sort = (v: any): any => {
    if (Array.isArray(v)) return v.map(sort);
    if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sort(v[k])]));
    return v;
  };
  return JSON.stringify(sort(value ?? null)).replace(/[<>&]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`);
}

function path(expr: string, scope: Scope): any {
  const [head, ...rest] = expr.split('.');
  let v = head === '' ? scope.root : scope.vars[head as string];
  if (head !== '' && !(head as string).startsWith('$')) throw new Error(`unsupported expression ${expr}`);
  for (const key of rest) v = v == null ? undefined : v[key];
  return v;
}

function evaluate(expr: string, scope: Scope, now: number): any {
  const e = expr.trim();
  if (e === '(call .time.Now).Unix') return Math.floor(now / 1000);
  let m = /^toJson \(omit (\S+)((?: "[^"]*")+)\)$/.exec(e);
  if (m) {
    const omitted = [...m[2]!.matchAll(/"([^"]*)"/g)].map((x) => x[1]);
    const map = { ...(path(m[1]!, scope) ?? {}) };
    for (const k of omitted) delete map[k as string];
    return goJson(map);
  }
  m = /^toJson (\S+)$/.exec(e);
  if (m) return goJson(path(m[1]!, scope));
  if (/^[.$][\w.$]*$/.test(e)) return path(e, scope);
  throw new Error(`unsupported template action {{${e}}}`);
}

export function renderGoTemplate(template: string, root: any, now = Date.now()): string {
  const parts = template.split(/(\{\{.*?\}\})/s);
  let pos = 0;
  const run = (scope: Scope, until: boolean): string => {
    let out = '';
    while (pos < parts.length) {
      const part = parts[pos++] as string;
      if (!part.startsWith('{{')) {
        out += part;
        continue;
      }
      const action = part.slice(2, -2).trim();
      if (action === 'end') {
        if (!until) throw new Error('unexpected {{end}}');
        return out;
      }
      const range = /^range \$(\w+), \$(\w+) := (\S+)$/.exec(action);
      if (range) {
        const items = (path(range[3]!, scope) ?? []) as any[];
        const start = pos;
        if (items.length === 0) {
          run({ ...scope, vars: { ...scope.vars } }, true);
        }
        items.forEach((item, i) => {
          pos = start;
          out += run({ root: scope.root, vars: { ...scope.vars, [`$${range[1]}`]: i, [`$${range[2]}`]: item } }, true);
        });
        continue;
      }
      const cond = /^if (\S+)$/.exec(action);
      if (cond) {
        const body = run(scope, true);
        if (evaluate(cond[1]!, scope, now)) out += body;
        continue;
      }
      const v = evaluate(action, scope, now);
      out += typeof v === 'string' ? v : String(v);
    }
    if (until) throw new Error('missing {{end}}');
    return out;
  };
  return run({ root, vars: {} }, false);
}
