/**
 * `freezes:` in the config: windows in which the actions that move a release forward (approve,
 * promote, refresh) are held by the freeze gate (src/actions/freeze.ts), unless a person in
 * `breakGlass` overrides with a reason. A window is either recurring (`schedule`, cron, plus
 * `duration`) or one span (`start`/`end`), read in its `timeZone`. Checked here, once; the gate
 * trusts what it is given.
 */
import { z } from 'zod';
import { doublestarToRegExp, NamePatternError } from '../model/kargo-name-pattern.js';
import { parseGoDuration, parseLocalTime, validCron, validTimeZone } from '../time/windows.js';

const slackPrincipal = z.string().regex(/^[USW][A-Z0-9]{2,}$/, 'must be a Slack user id (U…/W…) or user group id (S…)');

/** A pipeline or stage name, exact or `glob:<pattern>` (as a Kargo stage is selected elsewhere in the config). */
const nameOrGlob = z
  .string()
  .min(1)
  .max(253)
  .superRefine((value, ctx) => {
    if (!value.startsWith('glob:')) return;
    try {
      doublestarToRegExp(value.slice('glob:'.length));
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: err instanceof NamePatternError ? err.message : String(err) });
    }
  });

const localTime = z.string().refine((v) => parseLocalTime(v, 'UTC') !== undefined, 'must be a date and time such as 2026-11-27T00:00 (read in the freeze\'s timeZone) or with an offset such as 2026-11-27T00:00+01:00');

export const freezeSchema = z
  .object({
    name: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be lowercase letters, digits and "-"').max(63),
    reason: z.string().min(1).max(500),
    /** IANA time zone the schedule, start and end are read in. */
    timeZone: z.string().refine(validTimeZone, 'must be an IANA time zone such as Europe/Berlin or UTC').default('UTC'),
    /** Cron (5 fields): when each window starts; with `duration`. */
    schedule: z.string().max(200).refine(validCron, 'must be a cron schedule of 5 fields such as "0 16 * * 5"').optional(),
    /** Go-style duration of each scheduled window: `2h`, `90m`, `1h30m`. */
    duration: z.string().refine((v) => parseGoDuration(v) !== undefined, 'must be a duration such as 2h, 90m or 1h30m').optional(),
    start: localTime.optional(),
    end: localTime.optional(),
    /** Pipelines held (names or `glob:…`); unset: every pipeline. */
    pipelines: z.array(nameOrGlob).min(1).optional(),
    /** Stages held (names or `glob:…`) within those pipelines; unset: every stage. */
    stages: z.array(nameOrGlob).min(1).optional(),
    /** Who may override, with a reason (`--break-glass "…"`); unset: nobody. */
    breakGlass: z.object({ groups: z.array(slackPrincipal).min(1) }).strict().optional(),
  })
  .strict()
  .superRefine((f, ctx) => {
    const recurring = f.schedule !== undefined || f.duration !== undefined;
    const span = f.start !== undefined || f.end !== undefined;
    if (recurring === span) {
      ctx.addIssue({ code: 'custom', message: 'a freeze is either recurring (schedule and duration) or one span (start and end): set one pair' });
      return;
    }
    if (recurring && (f.schedule === undefined || f.duration === undefined)) ctx.addIssue({ code: 'custom', message: 'a recurring freeze needs both schedule and duration' });
    if (span && (f.start === undefined || f.end === undefined)) ctx.addIssue({ code: 'custom', message: 'a freeze span needs both start and end' });
    if (f.start !== undefined && f.end !== undefined) {
      const start = parseLocalTime(f.start, f.timeZone);
      const end = parseLocalTime(f.end, f.timeZone);
      if (start !== undefined && end !== undefined && end <= start) ctx.addIssue({ code: 'custom', path: ['end'], message: 'end must be after start' });
    }
  });

export const freezesSchema = z.array(freezeSchema).default([]).superRefine((list, ctx) => {
  const seen = new Set<string>();
  list.forEach((f, i) => {
    if (seen.has(f.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate freeze "${f.name}"` });
    seen.add(f.name);
  });
});

export type FreezeConfig = z.infer<typeof freezeSchema>;
