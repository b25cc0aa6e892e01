/** The machine's load averages, for a bench's JSON line: what shared the two cores with the run. */
import { loadavg } from 'node:os';

/** The 1, 5 and 15 minute load averages, to one decimal. */
export const loadAverages = (): number[] => loadavg().map((l) => Math.round(l * 10) / 10);

/** Read when a bench first imports this module: the load at its start. */
export const loadAtStart = loadAverages();
