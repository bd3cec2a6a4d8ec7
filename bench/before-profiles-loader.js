/**
 * A webpack loader that makes benchmark 8's "before": workflows/activity-proxies with every
 * timeout profile replaced by the one set of options each activity had before issue 22 (a 2 h
 * start-to-close, a 30 s heartbeat timeout), so recovery before and after is measured side by
 * side in one run. Works on the TypeScript source and on the compiled dist/ alike.
 */
const PROFILE = /^(export const profile = \{|exports\.profile = \{)/m;

module.exports = function beforeProfiles(source) {
  const found = PROFILE.exec(source);
  if (!found) throw new Error('activity-proxies has no profile to replace: update before-profiles-loader.js');
  const compiled = found[1].startsWith('exports.');
  return `${source.replace(PROFILE, (line) => line.replace('profile', 'profileNow'))}
const BEFORE_ISSUE_22 = { startToCloseTimeout: '2 hours', heartbeatTimeout: '30 seconds', retry: RETRY };
const before = (summary) => ({ ...BEFORE_ISSUE_22, summary });
${compiled ? 'exports.profile' : 'export const profile'} = { quick: before, long: before, helmWrite: before };
`;
};
