/** Moved to test/helpers/slack-harness.ts; kept so tests that import it from here still compile. */
export * from '../../helpers/slack-harness.js';
