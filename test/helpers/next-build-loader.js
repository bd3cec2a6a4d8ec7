/**
 * A webpack loader that makes "build N+1" of the workflow code for the upgrade drill
 * (test/cluster/upgrade.test.ts): workflows/canary.ts with one more timer before every hold, a
 * change of commands that a run started on today's code would fail to replay (a non-determinism
 * error at the hold's end) if it ever moved to this build.
 */
const HOLD = '    const waitMs = nextWaitMs(left);\n';

module.exports = function nextBuild(source) {
  if (!source.includes(HOLD))
    throw new Error('workflows/canary.ts has no hold to change: update next-build-loader.js');
  return source.replace(HOLD, `    await condition(() => false, 1, { summary: 'build N+1' });\n${HOLD}`);
};
