import { ControlRefused, control, firstRunning } from '../../runs/control';
import { RunInProgress, driftRun, startRun } from '../../runs/requests';
import { routeOf } from '../../runs/targets';
import { objectWorkflowId } from '../../core/plan/names';
import { sharedWorker, uniqueName } from '../helpers/env';
import { eventually } from '../helpers/processes';
import { fakeHelm } from './fake-helm';

/**
 * The release lock (core/plan/release-lock.ts) as armadactl meets it: a drift repair holds a
 * manifest's workflow ID, held in its first step. What is sent to the manifest meanwhile is
 * refused naming the repair, not dropped; its progress and a cancel reach it.
 */
let release: () => void = () => {};
const held = new Promise<void>((r) => (release = r));
const harness = sharedWorker({
  activities: {
    ...fakeHelm().activities,
    async helmCheckDrift() {
      await held;
      return null;
    },
  },
});

it('a repair holding a manifest’s ID: steering and a start are refused naming it; its progress and a cancel reach it', async () => {
  const ns = uniqueName('lock');
  const manifestId = objectWorkflowId('ArmadaManifest', ns, 'site');
  const repair = driftRun(
    {
      release: 'site-web',
      namespace: 'apps',
      chart: { namespace: ns, name: 'web' },
      policy: 'repair',
      objects: [
        { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'apps', name: 'site-web', change: 'deleted' },
      ],
    },
    manifestId,
  );
  const { client, taskQueue } = harness();
  try {
    await startRun(client, taskQueue, repair);
    const { runId } = await client.workflow.getHandle(manifestId).describe();
    const route = routeOf({ kind: 'ArmadaManifest', namespace: ns, name: 'site' }, 'pause');

    const refusal = await control(client, route, 'pause', { by: 'test' }).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(ControlRefused);
    expect((refusal as Error).message).toBe(
      `nothing to pause: ${manifestId} runs driftWorkflow run ${runId} (a drift repair or an undo of a release it owns), not a deploy; it ends in seconds to minutes, try again then`,
    );
    expect(await firstRunning(client, [manifestId], 'progress')).toBe(manifestId);

    const again = await startRun(client, taskQueue, repair).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(RunInProgress);
    expect((again as Error).message).toContain(
      `already has a run in progress: workflow ${manifestId}, driftWorkflow run ${runId} (drift of apps/site-web (repair): Deployment site-web deleted)`,
    );

    expect((await control(client, route, 'cancel', { by: 'test' })).workflowId).toBe(manifestId);
    // Recorded once the workflow task in flight (if any) completes.
    await eventually('the repair asked to cancel', async () => {
      const { events } = await client.workflow.getHandle(manifestId).fetchHistory();
      return events?.some((e) => e.workflowExecutionCancelRequestedEventAttributes) || undefined;
    });
  } finally {
    release();
  }
});
