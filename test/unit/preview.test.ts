import { canaryPreview, previewOf, type Wanted } from '../../core/plan/preview';
import type { ObservedRelease } from '../../core/plan/release';

const WANTED = 'a'.repeat(64);
const OTHER = 'b'.repeat(64);
const deploy: Wanted = { mode: 'deploy', digest: WANTED };
const uninstall: Wanted = { mode: 'uninstall' };
const release = (over: Partial<ObservedRelease> = {}): ObservedRelease => ({
  revision: 3,
  status: 'deployed',
  digest: WANTED,
  lastDeployedRevision: 3,
  createdByArmada: true,
  ...over,
});

describe('previewOf: what a run would do, as its planner decides', () => {
  const cases: [string, ObservedRelease | null, Wanted, object, string, number | null][] = [
    ['installs when there is no release', null, deploy, {}, 'install', null],
    [
      'installs over an uninstalled one kept in history',
      release({ status: 'uninstalled' }),
      deploy,
      {},
      'install',
      null,
    ],
    ['leaves a release with the wanted digest unchanged', release(), deploy, {}, 'unchanged', 3],
    ['upgrades a release with another digest', release({ digest: OTHER }), deploy, {}, 'upgrade', 3],
    [
      'upgrades a release armada never recorded a digest in, when adopted',
      release({ digest: undefined, createdByArmada: false }),
      deploy,
      { adopt: true },
      'upgrade',
      3,
    ],
    ['upgrades a failed release again', release({ status: 'failed' }), deploy, {}, 'upgrade', 3],
    [
      'recovers a pending upgrade first',
      release({ status: 'pending-upgrade', lastDeployedRevision: 2 }),
      deploy,
      {},
      'recover',
      3,
    ],
    [
      'recovers a pending first install first',
      release({ status: 'pending-install', revision: 1, lastDeployedRevision: undefined }),
      deploy,
      {},
      'recover',
      1,
    ],
    [
      'refuses a release armada-temporal did not create',
      release({ createdByArmada: false }),
      deploy,
      {},
      'refused',
      3,
    ],
    [
      'refuses to uninstall one it did not create, too',
      release({ createdByArmada: false }),
      uninstall,
      {},
      'refused',
      3,
    ],
    [
      'refuses a failed protected release',
      release({ status: 'failed' }),
      deploy,
      { protected: { continue_processing: false } },
      'refused',
      3,
    ],
    [
      'skips a failed protected release with continue_processing',
      release({ status: 'failed' }),
      deploy,
      { protected: { continue_processing: true } },
      'unchanged',
      3,
    ],
    ['uninstalls a release', release(), uninstall, {}, 'uninstall', 3],
    ['has nothing to uninstall without a release', null, uninstall, {}, 'unchanged', null],
  ];
  it.each(cases)('%s', (_, observed, wanted, spec, action, revision) => {
    expect(previewOf(observed, wanted, spec)).toMatchObject({ action, revision });
  });

  it('names both digests of an upgrade, shortened', () => {
    expect(previewOf(release({ digest: OTHER }), deploy, {}).reason).toBe(
      `chart or values changed since revision 3 (digest ${OTHER.slice(0, 12)} → ${WANTED.slice(0, 12)})`,
    );
  });

  it('shortens a keyed digest past its hmac-sha256: form', () => {
    const keyed = `hmac-sha256:${'c'.repeat(64)}`;
    expect(previewOf(release({ digest: OTHER }), { mode: 'deploy', digest: keyed }, {}).reason).toBe(
      `chart or values changed since revision 3 (digest ${OTHER.slice(0, 12)} → ${'c'.repeat(12)})`,
    );
  });

  it('names the revision a pending release is rolled back to', () => {
    expect(
      previewOf(release({ status: 'pending-upgrade', lastDeployedRevision: 2 }), deploy, {}).reason,
    ).toMatch(/pending-upgrade .*rolls back to revision 2/);
  });
});

describe('canaryPreview: the steps a canary upgrade would run', () => {
  const web = { canary: 'web-canary', stable: 'web', replicas: 10, stableReplicas: 10 };
  const worker = { canary: 'worker-canary', stable: null, replicas: 1, stableReplicas: 0 };

  it('adds the final 100 % and splits each Deployment at each step (10 replicas at 10 % → 1/9)', () => {
    expect(
      canaryPreview(
        [
          { percent: 10, sleep: '1m' },
          { percent: 50, approval: true },
        ],
        [web],
      ),
    ).toEqual([
      {
        step: 1,
        percent: 10,
        holdSeconds: 60,
        splits: [{ canary: 'web-canary', stable: 'web', replicas: { canary: 1, stable: 9 } }],
      },
      {
        step: 2,
        percent: 50,
        approval: true,
        splits: [{ canary: 'web-canary', stable: 'web', replicas: { canary: 5, stable: 5 } }],
      },
      {
        step: 3,
        percent: 100,
        splits: [{ canary: 'web-canary', stable: 'web', replicas: { canary: 10, stable: 0 } }],
      },
    ]);
  });

  it('gives a Deployment the revision adds its one replica from the first step', () => {
    const [first] = canaryPreview([{ percent: 10, sleep: 30 }], [web, worker]);
    expect(first.splits[1]).toEqual({
      canary: 'worker-canary',
      stable: null,
      replicas: { canary: 1, stable: 0 },
    });
  });

  it('has steps but no splits for a chart without Deployments', () => {
    expect(canaryPreview([{ percent: 50, sleep: 10 }], []).map((s) => s.splits)).toEqual([[], []]);
  });
});
