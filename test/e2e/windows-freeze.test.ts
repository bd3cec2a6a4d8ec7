import { GROUP, VERSION } from '../../api/common';
import { armadactlHere as armadactl } from '../helpers/armadactl';
import type { DeployWindow } from '../../api/windows';
import { nextOpening } from '../../core/plan/windows';
import { helm, helmHistory, sharedWorker, uniqueName } from '../helpers/env';
import { applyObjects, applyPolicy, installCrds, kubectl, settingsChart } from '../helpers/kube';
import { eventually, startBridge, type ProductProcess } from '../helpers/processes';

const REASON = 'release 2.0 goes out';

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

describe('deploy windows and freeze through the bridge (bridge process, real worker, sandbox)', () => {
  const crs = uniqueName('freeze');
  const releases = uniqueName('freeze-rel');
  // Cluster-scoped, so named after this file's namespace; it freezes that namespace alone.
  const policy = `freeze-${crs}`;
  const harness = sharedWorker();
  let bridge: ProductProcess | undefined;

  beforeAll(async () => {
    await installCrds();
    await kubectl('create', 'namespace', crs);
    process.env.ARMADA_TASK_QUEUE = harness().taskQueue;
    bridge = startBridge(crs, { ARMADA_TASK_QUEUE: harness().taskQueue, ARMADA_RESYNC_SECONDS: '2' });
  });
  afterAll(async () => {
    await bridge?.stop();
    await kubectl('delete', 'armadapolicy', policy, '--ignore-not-found');
    await kubectl('delete', 'namespace', releases, '--wait=false').catch(() => '');
    await kubectl('delete', 'namespace', crs, '--wait=false');
  });

  const manifest = async () =>
    JSON.parse(await kubectl('get', 'amf', 'demo', '-n', crs, '-o', 'json')) as {
      status?: {
        actual_state?: string;
        satisfied?: boolean;
        held?: { for: string; reason: string; since: string };
        conditions?: Condition[];
      };
    };
  const released = async (release: string) =>
    (await helm('list', '-n', releases, '-o', 'json', '--filter', `^${release}$`)).includes(`"${release}"`);

  it('holds before the next group (status, armadactl list), and the lifted run finishes', async () => {
    await applyObjects(crs, [
      settingsChart('first', releases, { a: '1' }),
      settingsChart('second', releases, { b: '2' }),
      {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'ArmadaChartGroup',
        metadata: { name: 'one' },
        spec: { chart_group: ['first'] },
      },
      {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'ArmadaChartGroup',
        metadata: { name: 'two' },
        spec: { chart_group: ['second'] },
      },
      {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'ArmadaManifest',
        metadata: { name: 'demo' },
        // The gate keeps the run between its groups while the freeze is set.
        spec: { release_prefix: 'fz', chart_groups: ['one', 'two'], approval: { before: ['two'] } },
      },
    ]);
    await eventually('the manifest waiting at its gate before group two', async () =>
      (await manifest()).status?.actual_state === 'waitingapproval' ? true : undefined,
    );
    expect(await released('fz-first')).toBe(true);

    await applyPolicy(policy, { namespaces: [crs], freeze: { reason: REASON } });
    await eventually('the bridge telling the run of the freeze', async () =>
      bridge!.output().includes('"message":"runs told of a freeze change"') ? true : undefined,
    );
    // Approved while frozen: the gate passes, the group does not start.
    await kubectl('annotate', 'amf', 'demo', '-n', crs, 'armada.airshipit.org/action=approve');
    const held = await eventually('the manifest held by the freeze', async () => {
      const m = await manifest();
      return m.status?.held?.for === 'freeze' ? m.status : undefined;
    });
    expect(held.held!.reason).toBe(`${REASON} (ArmadaPolicy ${policy})`);
    expect(held.conditions!.find((c) => c.type === 'Held')).toMatchObject({
      status: 'True',
      reason: 'Frozen',
      message: `frozen: ${REASON} (ArmadaPolicy ${policy})`,
    });
    const list = await armadactl('list', '-n', crs);
    expect(list.code).toBe(0);
    expect(list.printed).toMatch(
      new RegExp(`amf/demo .*waiting on freeze: ${REASON} \\(ArmadaPolicy ${policy}\\)`),
    );
    expect(await released('fz-second')).toBe(false);

    // Lifted: the policy stays, without its freeze.
    await applyPolicy(policy, { namespaces: [crs] });
    const done = await eventually('the manifest satisfied', async () => {
      const m = await manifest();
      return m.status?.satisfied ? m.status : undefined;
    });
    expect(done.held).toBeUndefined();
    expect(done.conditions!.find((c) => c.type === 'Held')).toMatchObject({
      status: 'False',
      reason: 'NotHeld',
    });
    expect(await released('fz-second')).toBe(true);
  });

  it('a chart outside its windows holds before its helm install, says until when, and installs at the opening', async () => {
    // One window an hour, opening 15 s from now (the run starts well before it): 30 s long.
    const at = new Date(Date.now() + 15_000);
    const windows: DeployWindow[] = [
      {
        kind: 'allow',
        schedule: `${at.getUTCSeconds()} ${at.getUTCMinutes()} * * * *`,
        duration: '30s',
        time_zone: 'UTC',
      },
    ];
    const opening = nextOpening(windows, Date.now())!;
    await applyObjects(crs, [settingsChart('later', releases, { c: '3' }, { windows })]);
    const chart = async () =>
      JSON.parse(await kubectl('get', 'act', 'later', '-n', crs, '-o', 'json')) as {
        status?: { satisfied?: boolean; held?: { for: string; until?: string }; conditions?: Condition[] };
      };
    const held = await eventually('the chart held outside its window', async () => {
      const c = await chart();
      return c.status?.held?.for === 'window' ? c.status : undefined;
    });
    expect(held.held!.until).toBe(new Date(opening).toISOString());
    expect(held.conditions!.find((c) => c.type === 'Held')).toMatchObject({
      status: 'True',
      reason: 'OutsideWindow',
      message: `outside its deploy windows until ${new Date(opening).toISOString()}`,
    });
    expect(await released('later')).toBe(false);

    const done = await eventually('the chart deployed once the window opened', async () => {
      const c = await chart();
      return c.status?.satisfied ? c.status : undefined;
    });
    expect(done.held).toBeUndefined();
    const [first] = await helmHistory('later', releases);
    // Helm's timestamps carry nanoseconds; milliseconds are enough here.
    const installedAt = Date.parse(first.updated!.replace(/(\.\d{3})\d+/, '$1'));
    expect(installedAt).toBeGreaterThanOrEqual(opening);
  });
});
