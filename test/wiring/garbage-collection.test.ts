import { describe, expect, it } from 'vitest';
import { chosenOnCommandLine } from '../../src/wiring/garbage-collection.js';

// Glidepath sets its GC flags at start-up; an operator who passed one to node keeps their choice.
describe('GC flags an operator chose on the node command line', () => {
  it('stand, whether turned on, off (--no-flag or --noflag), given a value, or spelt with underscores', () => {
    expect(chosenOnCommandLine('allocation-site-pretenuring', ['--allocation-site-pretenuring'])).toBe(true);
    expect(chosenOnCommandLine('allocation-site-pretenuring', ['--no-allocation-site-pretenuring'])).toBe(true);
    expect(chosenOnCommandLine('allocation-site-pretenuring', ['--allocation_site_pretenuring'])).toBe(true);
    expect(chosenOnCommandLine('allocation-site-pretenuring', ['--noallocation-site-pretenuring'])).toBe(true);
    expect(chosenOnCommandLine('heap-growing-percent', ['--enable-source-maps', '--heap-growing-percent=50'])).toBe(true);
  });

  it('are not confused with other flags or other arguments', () => {
    expect(chosenOnCommandLine('allocation-site-pretenuring', [])).toBe(false);
    expect(chosenOnCommandLine('allocation-site-pretenuring', ['--expose-gc', '', 'dist/src/main.js'])).toBe(false);
    expect(chosenOnCommandLine('heap-growing-percent', ['--heap-growing-percent-extra=1', '--max-old-space-size=512'])).toBe(false);
  });
});
