/**
 * The stand-in API server's own label selectors, written from the Kubernetes grammar
 * (apimachinery `labels.Parse`): comma-separated requirements `key`, `!key`, `key=value`,
 * `key==value`, `key!=value`, `key in (a,b)`, `key notin (a,b)`. Deliberately independent of
 * Glidepath's parser (src/kube/label-selector.ts): the tests check the product against this
 * server, so the two must not share one implementation and its mistakes.
 */

/** Kubernetes selection operators, with `=`/`==` as In of one value and `!=` as NotIn of one. */
export type SelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export interface SelectorRequirement {
  key: string;
  operator: SelectorOperator;
  values: string[];
}

export interface ParsedSelector {
  requirements: SelectorRequirement[];
}

export class SelectorSyntaxError extends Error {
  override readonly name = 'SelectorSyntaxError';
}

// Qualified name: optional DNS-subdomain prefix and '/', then a 1–63 character name.
const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function isLabelKey(key: string): boolean {
  const parts = key.split('/');
  if (parts.length > 2) return false;
  const name = parts[parts.length - 1]!;
  const prefix = parts.length === 2 ? parts[0]! : undefined;
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !PREFIX.test(prefix))) return false;
  return name.length > 0 && name.length <= 63 && NAME.test(name);
}

/** A label value: empty, or up to 63 characters starting and ending with an alphanumeric. */
export function isLabelValue(value: string): boolean {
  return value === '' || (value.length <= 63 && NAME.test(value));
}

type Token = { kind: 'word'; text: string } | { kind: 'op'; text: '(' | ')' | ',' | '=' | '==' | '!=' | '!' };

const SPECIAL = new Set(['(', ')', ',', '=', '!', '<', '>']);

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const ch = input[i]!;
    if (/\s/.test(ch)) {
      i++;
    } else if (ch === '=' || ch === '!') {
      const two = input.slice(i, i + 2);
      if (two === '==' || two === '!=') {
        tokens.push({ kind: 'op', text: two });
        i += 2;
      } else {
        tokens.push({ kind: 'op', text: ch });
        i++;
      }
    } else if (ch === '(' || ch === ')' || ch === ',') {
      tokens.push({ kind: 'op', text: ch });
      i++;
    } else if (ch === '<' || ch === '>') {
      // Kubernetes has gt/lt for numeric values; nothing Glidepath sends uses them.
      throw new SelectorSyntaxError(`operator "${ch}" is not supported here`);
    } else {
      let j = i;
      while (j < input.length && !SPECIAL.has(input[j]!) && !/\s/.test(input[j]!)) j++;
      tokens.push({ kind: 'word', text: input.slice(i, j) });
      i = j;
    }
  }
  return tokens;
}

class Parser {
  private at = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(): Token | undefined {
    return this.tokens[this.at];
  }

  private next(): Token | undefined {
    return this.tokens[this.at++];
  }

  private atBoundary(): boolean {
    const t = this.peek();
    return t === undefined || (t.kind === 'op' && t.text === ',');
  }

  private key(): string {
    const t = this.next();
    if (t?.kind !== 'word') throw new SelectorSyntaxError(`expected a label key, found ${t ? `"${t.text}"` : 'the end'}`);
    if (!isLabelKey(t.text)) throw new SelectorSyntaxError(`"${t.text}" is not a valid label key`);
    return t.text;
  }

  private value(raw: string): string {
    if (!isLabelValue(raw)) throw new SelectorSyntaxError(`"${raw}" is not a valid label value`);
    return raw;
  }

  requirement(): SelectorRequirement {
    const first = this.peek();
    if (first?.kind === 'op' && first.text === '!') {
      this.next();
      return { key: this.key(), operator: 'DoesNotExist', values: [] };
    }
    const key = this.key();
    if (this.atBoundary()) return { key, operator: 'Exists', values: [] };
    const op = this.next()!;
    if (op.kind === 'word' && (op.text === 'in' || op.text === 'notin')) {
      return { key, operator: op.text === 'in' ? 'In' : 'NotIn', values: this.valueSet(key, op.text) };
    }
    if (op.kind === 'op' && (op.text === '=' || op.text === '==' || op.text === '!=')) {
      const t = this.peek();
      let value = '';
      if (t?.kind === 'word') {
        value = this.value(t.text);
        this.next();
      } else if (!this.atBoundary()) {
        throw new SelectorSyntaxError(`unexpected "${t!.text}" after "${key}${op.text}"`);
      }
      return { key, operator: op.text === '!=' ? 'NotIn' : 'In', values: [value] };
    }
    throw new SelectorSyntaxError(`unexpected "${op.text}" after "${key}"`);
  }

  private valueSet(key: string, op: string): string[] {
    const open = this.next();
    if (open?.kind !== 'op' || open.text !== '(') throw new SelectorSyntaxError(`"${key} ${op}" must be followed by "(values)"`);
    const close = this.peek();
    if (close?.kind === 'op' && close.text === ')') throw new SelectorSyntaxError(`"${key} ${op} ()" needs at least one value`);
    const values: string[] = [];
    let pending = '';
    for (;;) {
      const t = this.next();
      if (t === undefined) throw new SelectorSyntaxError(`"${key} ${op} (" is missing its ")"`);
      if (t.kind === 'word') {
        pending = this.value(t.text);
      } else if (t.text === ',' || t.text === ')') {
        values.push(pending);
        pending = '';
        if (t.text === ')') return values;
      } else {
        throw new SelectorSyntaxError(`unexpected "${t.text}" in the values of "${key} ${op}"`);
      }
    }
  }

  all(): SelectorRequirement[] {
    const out: SelectorRequirement[] = [];
    if (this.peek() === undefined) return out;
    for (;;) {
      out.push(this.requirement());
      const t = this.next();
      if (t === undefined) return out;
      if (t.kind !== 'op' || t.text !== ',') throw new SelectorSyntaxError(`expected "," between requirements, found "${t.text}"`);
    }
  }
}

/** Parses `?labelSelector=`; the empty selector matches everything. Throws SelectorSyntaxError. */
export function parseSelector(selector: string): ParsedSelector {
  return { requirements: new Parser(tokenize(selector)).all() };
}

/** Every requirement must hold (Kubernetes ANDs them). */
export function selectorMatches(selector: ParsedSelector, labels: Readonly<Record<string, string>> | undefined): boolean {
  const l = labels ?? {};
  return selector.requirements.every(({ key, operator, values }) => {
    const has = Object.hasOwn(l, key);
    switch (operator) {
      case 'Exists':
        return has;
      case 'DoesNotExist':
        return !has;
      case 'In':
        return has && values.includes(l[key]!);
      case 'NotIn':
        return !has || !values.includes(l[key]!);
    }
  });
}
