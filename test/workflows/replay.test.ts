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
 * The upgrade policy (docs/how-to/scale-and-upgrade.md, "Worker upgrades"): every workflow type is pinned, so a change that
 * makes a history here fail to replay is a new build (a new Worker Deployment version; runs in
 * flight drain on the old build). Re-record the affected histories in the same commit and say
 * "new build" in its message. No `patched()`: these are histories of today's code only.
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
      'deployRun',
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
