import { Worker } from '@temporalio/worker';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { quietRuntime } from '../helpers/env';

/** The JSON the Temporal CLI writes (`workflow show -o json`); the replayer parses it itself. */
interface SavedRun {
  workflowId: string;
  history: { events?: { workflowExecutionStartedEventAttributes?: { workflowType?: { name?: string } } }[] };
}

const dir = path.resolve(__dirname, '../histories');
const histories = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .map((file) => ({ file, ...(JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as SavedRun) }));

/**
 * Saved histories of real runs (written by the workflow tests with ARMADA_SAVE_HISTORIES=1)
 * replay against today's workflow code: a non-deterministic change fails here.
 *
 * The patch policy, from 0.1.0 on (runs of a released version may be in flight when a worker
 * of the next one starts; nothing before 0.1.0 was released, and its seven gates were retired):
 * 1. A change of what a workflow does (the commands it issues, their order) goes behind
 *    `patched('<what-changed>')`, the old branch kept. The histories of the old behaviour stay
 *    here and keep replaying; the new behaviour's are added beside them (`v<N>-` prefix for
 *    the old ones when both exist).
 * 2. In the next minor release the gate becomes `deprecatePatch('<what-changed>')` and the old
 *    branch is deleted: runs started by the release before are over by then (the release notes
 *    say that runs must be drained, `armadactl history` shows any left). Their histories are
 *    deleted in the same commit.
 * 3. One minor release later the `deprecatePatch` call itself goes.
 * A change no running history can take (a new input shape, a renamed signal) gets a new worker
 * version instead (Worker Versioning: the old worker drains its runs).
 * CI replays every history here on every run; re-record only for new scenarios, never to make
 * a replay failure go away.
 */
describe('replay of saved histories', () => {
  beforeAll(quietRuntime);

  it('has histories of every workflow type', () => {
    const types = new Set(
      histories.map(
        (h) => h.history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name,
      ),
    );
    expect([...types].sort()).toEqual([
      'canaryWorkflow',
      'chartWorkflow',
      'deployerWorkflow',
      'driftWorkflow',
      'groupWorkflow',
      'manifestWorkflow',
      'notifierWorkflow',
      'releaseUndoWorkflow',
    ]);
  });

  it.each(histories.map((h) => [h.file, h]))('%s replays without non-determinism', async (_id, history) => {
    const bundle = process.env.ARMADA_TEST_WORKFLOW_BUNDLE;
    if (!bundle) throw new Error('ARMADA_TEST_WORKFLOW_BUNDLE is not set: run the suite with `npm test`');
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: bundle } },
      history.history,
      history.workflowId,
    );
  });
});
