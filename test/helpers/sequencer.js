const Sequencer = require('@jest/test-sequencer').default;

/**
 * The suite runs on two Jest workers (test/run.sh). Each takes the next file when it is free, so
 * the longest files go first, and a file that keeps both cores busy (helm for hundreds of
 * releases) is paired with one that mostly waits (killed workers' heartbeat timeouts, durable
 * timers): the two lanes then end at about the same time, and the busy files never meet.
 * Their durations are in docs/contributing/testing.md, "Test run times"; a new file of a minute or more belongs
 * here too. Every other file follows in Jest's own order (the slowest of the last run first).
 */
const LONGEST_FIRST = [
  'drills/large-manifest', // CPU: 300 releases
  'drills/worker-crash', // waits: ten killed workers
  'cluster/production', // waits: killed workers, holds (3 workers, 2 bridges, PostgreSQL)
  'e2e/bridge-churn', // CPU: ~270 runs
  'workflows/canary', // waits: canary timers
  'e2e/bridge', // waits: bridges and Leases
  'drills/api-outage', // waits: its own kube-apiserver down 30 s
  'cluster/upgrade', // waits: canary holds on two worker builds
  'cluster/in-cluster', // waits: the operator's pods and podinfo on the real node (~100 s)
  'e2e/getting-started', // both: npm start's worker and bridge, a CLI per tutorial step (~65 s)
];

const rank = (test) => {
  const i = LONGEST_FIRST.findIndex((name) => test.path.endsWith(`/test/${name}.test.ts`));
  return i === -1 ? LONGEST_FIRST.length : i;
};

module.exports = class LongestFirst extends Sequencer {
  sort(tests) {
    // Array.prototype.sort is stable: the files not listed keep Jest's order.
    return [...super.sort(tests)].sort((a, b) => rank(a) - rank(b));
  }
};
