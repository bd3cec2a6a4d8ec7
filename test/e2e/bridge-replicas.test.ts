import { objectWorkflowId } from '../../core/plan/names';
import { helm, sharedWorker, uniqueName } from '../helpers/env';
import { applyObjects, helloChart, installCrds, kubectl } from '../helpers/kube';
import { grantAnyNamespace, startProcess, type ProductProcess } from '../helpers/processes';

const LEASE_SECONDS = 3;

describe('two bridge replicas: only the leader acts; killing it hands over (processes, sandbox)', () => {
  const crs = uniqueName('replicas');
  const releases = uniqueName('replicas-rel');
  const harness = sharedWorker();
  const bridges: ProductProcess[] = [];

  /** Applies a standalone ArmadaChart (one release of the example chart) with kubectl. */
  const applyChart = (name: string) => applyObjects(crs, [helloChart(name, releases)]);
  const deployed = async (release: string) => {
    for (;;) {
      const list = JSON.parse(await helm('list', '-n', releases, '-o', 'json')) as {
        name: string;
        status: string;
      }[];
      if (list.some((r) => r.name === release && r.status === 'deployed')) return;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  };
  const runsOf = async (workflowId: string) => {
    let runs = 0;
    for await (const run of harness().client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
      void run;
      runs++;
    }
    return runs;
  };

  beforeAll(async () => {
    await installCrds();
    await kubectl('create', 'namespace', crs);
    grantAnyNamespace(crs);
    for (let i = 0; i < 2; i++)
      bridges.push(
        startProcess('dist/bridge/main.js', {
          ARMADA_TASK_QUEUE: harness().taskQueue,
          ARMADA_NAMESPACES: crs,
          ARMADA_LEASE_NAMESPACE: crs,
          ARMADA_LEASE_SECONDS: String(LEASE_SECONDS),
        }),
      );
  });
  afterAll(async () => {
    await Promise.all(bridges.map((b) => b.stop()));
    await kubectl('delete', 'namespace', releases, crs, '--wait=false');
  });

  it('the leader alone starts runs; after a SIGKILL the other takes over and pending work completes', async () => {
    const leaderIndex = await Promise.race(
      bridges.map((b, i) => b.printed('"started leading"').then(() => i)),
    );
    const [leader, follower] = [bridges[leaderIndex], bridges[1 - leaderIndex]];
    await applyChart('one');
    await deployed('one');
    await leader.printed('"started run"');
    expect(follower.output()).not.toContain('"started leading"');
    expect(follower.output()).not.toContain('"started run"');

    await leader.stop('SIGKILL');
    const killedAt = Date.now();
    await applyChart('two'); // pending while nobody leads
    await follower.printed('"started leading"');
    const handover = Date.now() - killedAt;
    expect(handover).toBeLessThan((LEASE_SECONDS + 5) * 1000);
    await deployed('two');
    // The new leader re-lists everything: 'one' already had its run for this spec, so no second.
    expect(await runsOf(objectWorkflowId('ArmadaChart', crs, 'one'))).toBe(1);
    expect(await runsOf(objectWorkflowId('ArmadaChart', crs, 'two'))).toBe(1);
  });
});
