/**
 * Kubernetes label selectors (the string form used by `kubectl -l` and `?labelSelector=`).
 * Stages select their targets with these, so Rollouts and Applications can come and go
 * without a config change. The config parses each one once, at load, into a
 * `CompiledLabelSelector` that routing and commands match with.
 */
import { isLabelKey, isLabelValue } from './kube-names.js';

export type Requirement =
  | { key: string; op: 'eq' | 'neq'; values: [string] }
  | { key: string; op: 'in' | 'notin'; values: string[] }
  | { key: string; op: 'exists' | 'doesnotexist'; values: [] };

export interface LabelSelector {
  readonly source: string;
  readonly requirements: readonly Requirement[];
}

export class LabelSelectorError extends Error {
  override readonly name = 'LabelSelectorError';
  constructor(readonly selector: string, readonly reason: string) {
    super(`invalid label selector "${selector}": ${reason}`);
  }
}

/** Splits on commas that are not inside parentheses. */
function splitTerms(selector: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of selector) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      terms.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  terms.push(current);
  return terms;
}

export interface ParseOptions {
  /** Kubernetes accepts `key=` (empty value); in config it is almost always a typo, so it is refused unless allowed. */
  allowEmptyValues?: boolean;
}

function parseTerm(selector: string, raw: string, options: ParseOptions): Requirement {
  const term = raw.trim();
  if (term === '') throw new LabelSelectorError(selector, 'empty requirement');
  const setMatch = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(term);
  if (setMatch) {
    // Every group of the pattern takes part in a match, so each is a string.
    const [key, list] = [setMatch[1]!, setMatch[3]!];
    const op = setMatch[2] === 'in' ? 'in' : 'notin';
    const values = list.split(',').map((v) => v.trim());
    checkKey(selector, key);
    if (values.length === 1 && values[0] === '') {
      throw new LabelSelectorError(selector, `"${key} ${op} ()" needs at least one value`);
    }
    for (const v of values) checkValue(selector, v);
    return { key, op, values };
  }
  const opMatch = /^([^=!\s]+)\s*(==|=|!=)\s*(.*)$/.exec(term);
  if (opMatch) {
    const [key, op, value] = [opMatch[1]!, opMatch[2]!, opMatch[3]!];
    checkKey(selector, key);
    if (value.includes('=') || value.includes('!')) {
      throw new LabelSelectorError(selector, `unexpected "${value}" after "${key}${op}"`);
    }
    if (value === '' && !options.allowEmptyValues) {
      throw new LabelSelectorError(selector, `"${key}${op}" needs a value; to select on the label's presence write just "${key}"`);
    }
    checkValue(selector, value);
    return { key, op: op === '!=' ? 'neq' : 'eq', values: [value] };
  }
  if (term.startsWith('!')) {
    const key = term.slice(1).trim();
    checkKey(selector, key);
    return { key, op: 'doesnotexist', values: [] };
  }
  if (/[=!()\s]/.test(term)) throw new LabelSelectorError(selector, `cannot parse "${term}"`);
  checkKey(selector, term);
  return { key: term, op: 'exists', values: [] };
}

function checkKey(selector: string, key: string): void {
  if (!isLabelKey(key)) throw new LabelSelectorError(selector, `"${key}" is not a valid label key`);
}

function checkValue(selector: string, value: string): void {
  if (!isLabelValue(value)) {
    throw new LabelSelectorError(selector, `"${value}" is not a valid label value`);
  }
}

/** Parses a selector; the empty string selects everything, as in Kubernetes. */
export function parseLabelSelector(selector: string, options: ParseOptions = {}): LabelSelector {
  if (selector.trim() === '') return { source: selector, requirements: [] };
  if (selector.length > 4096) throw new LabelSelectorError(selector.slice(0, 40) + '…', 'longer than 4096 characters');
  return { source: selector, requirements: splitTerms(selector).map((t) => parseTerm(selector, t, options)) };
}

export function matchesLabels(selector: LabelSelector, labels: Readonly<Record<string, string>> | undefined): boolean {
  const l = labels ?? {};
  return selector.requirements.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    const value = l[r.key];
    switch (r.op) {
      case 'eq':
        return has && value === r.values[0];
      case 'neq':
        return !has || value !== r.values[0];
      case 'in':
        return has && r.values.includes(value as string);
      case 'notin':
        return !has || !r.values.includes(value as string);
      case 'exists':
        return has;
      case 'doesnotexist':
        return !has;
    }
  });
}

/**
 * A selector parsed once: its text (what the Kubernetes API takes as `?labelSelector=`) and a
 * matcher. It prints as its text, so a config stays readable in logs.
 */
export interface CompiledLabelSelector {
  readonly text: string;
  matches(labels: Readonly<Record<string, string>> | undefined): boolean;
  toJSON(): string;
}

/** Parses `text` (throwing LabelSelectorError when it is not a selector) into a matcher. */
export function compileLabelSelector(text: string, options: ParseOptions = {}): CompiledLabelSelector {
  const parsed = parseLabelSelector(text, options);
  return { text, matches: (labels) => matchesLabels(parsed, labels), toJSON: () => text };
}

/** A Kubernetes `matchExpressions` entry, as ApplicationSet RollingSync steps use them. */
export interface MatchExpression {
  key: string;
  operator: string;
  values?: string[] | undefined;
}

/**
 * ANDed match expressions. Only In and NotIn are understood (as by the ApplicationSet
 * controller, which rejects other operators): any other operator matches nothing.
 */
export function matchesExpressions(labels: Readonly<Record<string, string>> | undefined, expressions: readonly MatchExpression[]): boolean {
  const requirements: Requirement[] = [];
  for (const e of expressions) {
    if (e.operator !== 'In' && e.operator !== 'NotIn') return false;
    requirements.push({ key: e.key, op: e.operator === 'In' ? 'in' : 'notin', values: e.values ?? [] });
  }
  return matchesLabels({ source: '', requirements }, labels);
}
