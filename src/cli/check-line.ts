/** One line of `glidepath check`: a mark, what was checked, and what is wrong and what to do. */
import { answerWithin } from '../obs/deadline.js';

export type Mark = 'ok' | 'warn' | 'FAIL';

export interface CheckLine {
  mark: Mark;
  /** `config`, `cluster prod`, `redis`, `slack`, `kargo api prod`. */
  subject: string;
  text: string;
}

export const ok = (subject: string, text: string): CheckLine => ({ mark: 'ok', subject, text });
export const warn = (subject: string, text: string): CheckLine => ({ mark: 'warn', subject, text });
export const fail = (subject: string, text: string): CheckLine => ({ mark: 'FAIL', subject, text });

/** Plain text for a terminal: the mark in a column of its own, so `grep ^FAIL` finds the problems. */
export function formatLine(line: CheckLine): string {
  // Server words may carry newlines; a check is one line.
  return `${line.mark.padEnd(4)}  ${line.subject}: ${line.text.replace(/\s*\n\s*/g, ' ')}`;
}

/**
 * `work`, or a FAIL after `ms`: the clients have timeouts of their own, this is the bound on
 * whatever they miss (a Redis that accepts the connection and never answers), so check never hangs.
 */
export function within(ms: number, subject: string, work: Promise<CheckLine[]>): Promise<CheckLine[]> {
  return answerWithin(work, ms, () => [fail(subject, `no answer within ${ms / 1000} s`)]);
}
