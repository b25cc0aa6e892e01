/** Moved to test/helpers/slack-rigs.ts; kept so tests that import it from here still compile. */
export { startPipelineRig, type PipelineRig } from '../../helpers/slack-rigs.js';
