import { kinds } from '../../api/kinds';
import { objectWorkflowId } from '../../core/plan/names';
import { metricValue, scrape, type PromSample } from '../../bench/prometheus';
import { crossObjectCases, goodManifest, hostileDocuments } from '../fixtures/hostile';
import { helm, sharedWorker, uniqueName } from '../helpers/env';
import { createObject, installCrds, kubectl } from '../helpers/kube';
import { metricsBase } from '../helpers/metrics';
import { eventually, startBridge, type ProductProcess } from '../helpers/processes';

type Condition = { type: string; status: string; message: string };

/**
 * The conditions of every armada object in a namespace, by `Kind/name`, in one kubectl call with
 * its own JSONPath (the megabyte objects stay in kubectl): one process per poll, not one per object.
 */
async function conditionsIn(namespace: string): Promise<Map<string, Condition[]>> {
  const plurals = Object.values(kinds).map((k) => k.plural);
  const out = await kubectl(
    'get',
    plurals.join(','),
    '-n',
    namespace,
    '-o',
    'jsonpath={range .items[*]}{.kind}/{.metadata.name}{"\\t"}{.status.conditions}{"\\n"}{end}',
  );
  return new Map(
    out
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [object, conditions] = line.split('\t');
        return [object, conditions ? (JSON.parse(conditions) as Condition[]) : []];
      }),
  );
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
    // A set's first objects are Invalid for what is still missing until the last one arrives.
    const invalidCondition = (
      now: Map<string, Condition[]>,
      { kind, name, names }: (typeof invalid)[number],
    ) =>
      now
        .get(`${kind}/${name}`)
        ?.find((c) => c.type === 'Invalid' && c.status === 'True' && c.message.includes(names));
    let notYet: string[] = [];
    const marked = await eventually(
      'every hostile object Invalid, naming its problem',
      async () => {
        const now = await conditionsIn(crs);
        const found = invalid.map((target) => invalidCondition(now, target));
        notYet = invalid.filter((_, i) => !found[i]).map((t) => `${t.kind}/${t.name} (${t.names})`);
        return notYet.length ? undefined : found;
      },
      { process: bridge, timeoutMs: 30_000 },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\nnot Invalid as expected: ${notYet.join('; ')}`);
    });
    for (const condition of marked) expect(condition!.message.length).toBeLessThan(4096);

    // Two resync rounds over every object, each reconciled, then: nothing but the good
    // manifest's own runs.
    const base = await metricsBase(bridge!);
    const resyncs = (samples: PromSample[]) =>
      metricValue(samples, 'armada_bridge_watch_events_total', { change: 'resync' }) ?? 0;
    const cached = goodManifest(releases).length + stored.length + sets.flatMap((set) => set.docs).length;
    const from = resyncs(await scrape(`${base}/metrics`));
    await eventually(
      'two resync rounds over every object, all reconciled',
      async () => {
        const samples = await scrape(`${base}/metrics`);
        const idle =
          metricValue(samples, 'armada_bridge_queue_depth') === 0 &&
          metricValue(samples, 'armada_bridge_queue_running') === 0;
        return resyncs(samples) - from >= 2 * cached && idle ? true : undefined;
      },
      { process: bridge, timeoutMs: 30_000 },
    );
    expect((await workflowsOnQueue()).sort()).toEqual(goodWorkflows);
    for (const { kind, name } of invalid) {
      const id = objectWorkflowId(kind, crs, name);
      expect([id, await runsOf(id)]).toEqual([id, 0]);
    }
    for (const c of stored.filter((s) => s.doc.kind === 'ArmadaChart')) {
      const id = objectWorkflowId('ArmadaChart', crs, c.doc.metadata.name);
      expect([id, await runsOf(id)]).toEqual([id, 0]);
    }
    // Each Invalid condition stayed put: none was cleared in between (no `Valid` Event).
    const events = JSON.parse(
      await kubectl('get', 'events', '-n', crs, '--field-selector', 'reason=Valid', '-o', 'json'),
    ) as { items: { involvedObject: { kind: string; name: string } }[] };
    expect(events.items.map((e) => `${e.involvedObject.kind}/${e.involvedObject.name}`)).toEqual([]);
    expect(await runsOf(objectWorkflowId('ArmadaManifest', crs, 'good'))).toBe(1);
    expect(await revisions('good-web', releases)).toEqual(before);
    console.log(
      `hostile drill: ${documents.length - stored.length} refused at apply, ${invalid.length} marked Invalid, ` +
        `0 workflows started, good-web at revision ${before.at(-1)}; ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  });
});
