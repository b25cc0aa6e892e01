/** Moved to test/helpers/commands-rig.ts; kept so tests that import it from here still compile. */
export * from '../../helpers/commands-rig.js';
