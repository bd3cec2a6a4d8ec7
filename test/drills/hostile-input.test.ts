import { kinds, type KindName } from '../../api/kinds';
import { objectWorkflowId, releaseWorkflowId } from '../../workflows/plan/names';
import { crossObjectCases, goodManifest, hostileDocuments } from '../fixtures/hostile';
import { helm, sharedWorker, uniqueName } from '../helpers/env';
import { createObject, installCrds, kubectl } from '../helpers/kube';
import { eventually, startBridge, type ProductProcess } from '../helpers/processes';

type Condition = { type: string; status: string; message: string };

/** The object's conditions, read with kubectl's own JSONPath (a megabyte object stays in kubectl). */
async function conditions(kind: KindName, name: string, namespace: string): Promise<Condition[]> {
  const out = await kubectl(
    'get',
    kinds[kind].plural,
    name,
    '-n',
    namespace,
    '-o',
    'jsonpath={.status.conditions}',
  );
  return out ? (JSON.parse(out) as Condition[]) : [];
}

const revisions = async (release: string, namespace: string) =>
  (JSON.parse(await helm('history', release, '-n', namespace, '-o', 'json')) as { revision: number }[]).map(
    (r) => r.revision,
  );

describe('hostile-input drill: a good release, then 67 hostile documents (bridge process, real worker, sandbox)', () => {
  const crs = uniqueName('hostile');
  const releases = uniqueName('hostile-rel');
  const harness = sharedWorker();
  let bridge: ProductProcess | undefined;

  beforeAll(async () => {
    await installCrds();
    await kubectl('create', 'namespace', crs);
    bridge = startBridge(crs, { ARMADA_TASK_QUEUE: harness().taskQueue, ARMADA_RESYNC_SECONDS: '2' });
  });
  afterAll(async () => {
    await bridge?.stop();
    await kubectl('delete', 'namespace', releases, '--wait=false').catch(() => '');
    await kubectl('delete', 'namespace', crs, '--wait=false');
  });

  const workflowsOnQueue = async () => {
    const ids: string[] = [];
    for await (const run of harness().client.workflow.list({ query: `TaskQueue = '${harness().taskQueue}'` }))
      ids.push(run.workflowId);
    return ids;
  };
  const runsOf = async (workflowId: string) => {
    const runs = [];
    for await (const run of harness().client.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
      runs.push(run.runId);
    return runs.length;
  };

  it('each is refused at apply or marked Invalid naming the problem; no workflow starts; the good release keeps its revision', async () => {
    const started = Date.now();
    for (const doc of goodManifest(releases)) expect(await createObject(doc, crs)).toBeNull();
    await eventually(
      'the good manifest satisfied',
      async () => {
        const out = await kubectl('get', 'amf', 'good', '-n', crs, '-o', 'jsonpath={.status.satisfied}');
        return out === 'true' ? true : undefined;
      },
      { process: bridge, timeoutMs: 40_000 },
    );
    const before = await revisions('good-web', releases);
    const goodWorkflows = (await workflowsOnQueue()).sort();
    expect(goodWorkflows).toContain(objectWorkflowId('ArmadaManifest', crs, 'good'));

    // Single documents: the API server refuses some (and says why); the bridge must catch the rest.
    const documents = hostileDocuments(releases);
    const refusals = await Promise.all(documents.map((c) => createObject(c.doc, crs)));
    documents.forEach((c, i) => {
      if (c.where === 'validator') expect([c.name, refusals[i]]).toEqual([c.name, null]);
      else expect(refusals[i]).toContain(c.refusal ?? c.field);
    });
    const stored = documents.filter((c) => c.where === 'validator');

    // Sets valid one by one: created in order (each object after the one that lists it, so none
    // is ever a standalone chart or group), after the good manifest.
    const sets = crossObjectCases(releases, crs);
    for (const set of sets) for (const doc of set.docs) expect(await createObject(doc, crs)).toBeNull();

    const invalid = [
      ...stored.map((c) => ({ kind: c.doc.kind, name: c.doc.metadata.name, names: c.field })),
      ...sets.map((c) => ({ ...c.target, names: c.problem })),
    ];
    await Promise.all(
      invalid.map(async ({ kind, name, names }) => {
        // A set's first objects are Invalid for what is still missing until the last one arrives.
        const condition = await eventually(
          `${kind}/${name} Invalid naming ${JSON.stringify(names)}`,
          async () =>
            (await conditions(kind, name, crs)).find(
              (c) => c.type === 'Invalid' && c.status === 'True' && c.message.includes(names),
            ),
          { process: bridge, timeoutMs: 30_000 },
        );
        expect(condition.message.length).toBeLessThan(4096);
      }),
    );

    // Two resync periods over every object, then: nothing but the good manifest's own runs.
    await new Promise((resolve) => setTimeout(resolve, 4500));
    expect((await workflowsOnQueue()).sort()).toEqual(goodWorkflows);
    for (const { kind, name } of invalid) {
      const id = objectWorkflowId(kind, crs, name);
      expect([id, await runsOf(id)]).toEqual([id, 0]);
    }
    for (const c of stored.filter((s) => s.doc.kind === 'ArmadaChart')) {
      const id = releaseWorkflowId(releases, (c.doc.spec as { release: string }).release);
      expect([id, await runsOf(id)]).toEqual([id, 0]);
    }
    expect(await runsOf(objectWorkflowId('ArmadaManifest', crs, 'good'))).toBe(1);
    expect(await revisions('good-web', releases)).toEqual(before);
    console.log(
      `hostile drill: ${documents.length - stored.length} refused at apply, ${invalid.length} marked Invalid, ` +
        `0 workflows started, good-web at revision ${before.at(-1)}; ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  });
});
