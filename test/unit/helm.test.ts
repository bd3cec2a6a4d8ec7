import { gzipSync } from 'node:zlib';
import { decodeStoredRelease } from '../../activities/helm/status';
import { classifyHelmError, HELM_COMMAND_FAILED } from '../../activities/helm/errors';
import { NonRetryable } from '../../core/failures';
import { parseRelease, recordedDigest } from '../../activities/helm/release';
import { upgradeArgs } from '../../activities/helm/upgrade';

describe('upgradeArgs', () => {
  const base = {
    release: 'web',
    namespace: 'apps',
    chart: { source: { type: 'local' as const, location: 'charts/web' }, contentDigest: 'c' },
  };
  /** What every upgrade passes: release, chart, namespace, values file, JSON output. */
  const always = [
    'upgrade',
    '--install',
    'web',
    './charts/web',
    '--namespace',
    'apps',
    '--create-namespace',
    '--values',
    '/tmp/v.json',
    '--output',
    'json',
    '--labels',
    'armada.airshipit.org/deployed-by=armada-temporal',
  ];

  it.each([
    ['installs or upgrades with values from a file and JSON output', base, always],
    [
      'pins the chart version when one is given',
      { ...base, version: '1.2.3' },
      [...always, '--version', '1.2.3'],
    ],
    [
      'records the digest, bounds operations, waits natively and forces when asked',
      { ...base, digest: 'abc', timeoutSeconds: 90, nativeWait: true, force: true, noHooks: true },
      [
        ...always,
        '--description',
        'armada-digest=abc',
        '--timeout',
        '90s',
        '--wait=watcher',
        '--force-replace',
        '--no-hooks',
      ],
    ],
  ])('%s', (_name, req, expected) => {
    expect(upgradeArgs(req, './charts/web', '/tmp/v.json')).toEqual(expected);
  });

  it('never puts values on the command line', () => {
    const args = upgradeArgs({ ...base, values: { password: 's3cret' } }, './charts/web', '/tmp/v.json');
    expect(args.join(' ')).not.toContain('s3cret');
  });
});

describe('classifyHelmError', () => {
  it.each([
    ['a missing chart directory is final', 'Error: path "./nope" not found', NonRetryable.ChartNotFound],
    ['a missing Chart.yaml is final', 'Error: Chart.yaml file is missing', NonRetryable.ChartNotFound],
    [
      'a template error is final',
      'Error: template: hello/templates/x.yaml:3: unexpected EOF',
      NonRetryable.InvalidChart,
    ],
    [
      'values that break YAML are final',
      'Error: YAML parse error on hello/templates/d.yaml',
      NonRetryable.InvalidChart,
    ],
    [
      'a permission error is final',
      'Error: deployments.apps is forbidden: User "x" cannot create',
      NonRetryable.Forbidden,
    ],
    [
      'an object the API server refuses as invalid is final',
      'Error: server-side apply failed for object a/b apps/v1, Kind=Deployment: Deployment.apps "b" is invalid: spec.replicas: Invalid value: -1',
      NonRetryable.InvalidChart,
    ],
    [
      'a field of the wrong type is final',
      'Error: server-side apply failed for object a/b apps/v1, Kind=Deployment: failed to create typed patch object (a/b; apps/v1, Kind=Deployment): .spec.replicas: expected numeric (int or float), got string',
      NonRetryable.InvalidChart,
    ],
    [
      'a test pod that failed is final',
      'Error: resource Pod/apps/web-test not ready. status: Failed, message: pod web-test failed',
      NonRetryable.HelmResourceFailed,
    ],
    [
      'a hook that failed is final, on install and on upgrade',
      'level=WARN msg="upgrade failed" name=web error="post-upgrade hooks failed: resource Job/apps/web-migrate not ready. status: Failed, message: job failed"',
      NonRetryable.HelmResourceFailed,
    ],
    [
      'a hook still running at its timeout is retried',
      'Error: failed post-install: resource Pod/apps/web-hook not ready. status: InProgress, message: pod running\ncontext deadline exceeded',
      HELM_COMMAND_FAILED,
    ],
    ['a wait timeout is retried', 'Error: UPGRADE FAILED: context deadline exceeded', HELM_COMMAND_FAILED],
    [
      'an unreachable API server is retried',
      'Error: Kubernetes cluster unreachable: connection refused',
      HELM_COMMAND_FAILED,
    ],
  ])('%s', (_name, output, expected) => {
    expect(classifyHelmError(output)).toBe(expected);
  });
});

describe('parseRelease', () => {
  it('reads name, namespace, revision, status and chart from helm JSON', () => {
    const json = JSON.stringify({
      name: 'web',
      namespace: 'apps',
      version: 4,
      info: { status: 'deployed', description: 'Upgrade complete' },
      chart: { metadata: { name: 'hello', version: '0.1.0' } },
      manifest: '---',
    });
    expect(parseRelease(json)).toEqual({
      release: 'web',
      namespace: 'apps',
      revision: 4,
      status: 'deployed',
      chart: { name: 'hello', version: '0.1.0' },
    });
  });

  it('rejects output that is not a release document', () => {
    expect(() => parseRelease('{"name":"web"}')).toThrow(/namespace/);
  });
});

describe('recordedDigest', () => {
  const history = [
    { revision: 1, status: 'superseded', description: 'armada-digest=aaa' },
    { revision: 2, status: 'superseded', description: 'armada-digest=bbb' },
    { revision: 3, status: 'superseded', description: 'Rollback to 1' },
    { revision: 4, status: 'deployed', description: 'Rollback to 3' },
  ];

  it('reads the digest armada wrote', () => {
    expect(recordedDigest(history, history[1])).toBe('bbb');
  });

  it('follows rollbacks to the revision they re-applied, through chains of them', () => {
    expect(recordedDigest(history, history[2])).toBe('aaa');
    expect(recordedDigest(history, history[3])).toBe('aaa');
  });

  it('is undefined when the rolled-back-to revision is not in the history, or was not written by armada', () => {
    expect(recordedDigest(history.slice(2), history[2])).toBeUndefined();
    expect(
      recordedDigest([{ revision: 1, status: 'deployed', description: 'Install complete' }], {
        revision: 1,
        status: 'deployed',
        description: 'Install complete',
      }),
    ).toBeUndefined();
  });

  it('does not loop on a rollback that names itself', () => {
    const self = { revision: 5, status: 'deployed', description: 'Rollback to 5' };
    expect(recordedDigest([self], self)).toBeUndefined();
  });
});

describe("decodeStoredRelease: helm's Secret driver record", () => {
  const release = {
    name: 'web',
    namespace: 'apps',
    version: 3,
    info: { status: 'deployed', description: 'armada-digest=abc', last_deployed: '2026-11-25T03:00:00Z' },
  };
  /** As the API returns a helm Secret's `release` value: base64 of helm's base64 of gzipped JSON. */
  const stored = (json: Buffer) => Buffer.from(json.toString('base64')).toString('base64');

  it('reads a gzipped record', () => {
    expect(decodeStoredRelease(stored(gzipSync(JSON.stringify(release))), 'apps/x')).toMatchObject({
      version: 3,
      info: { status: 'deployed', description: 'armada-digest=abc' },
    });
  });

  it('reads a record helm stored without gzip', () => {
    expect(decodeStoredRelease(stored(Buffer.from(JSON.stringify(release))), 'apps/x').version).toBe(3);
  });

  it('names the Secret when the record is not a release', () => {
    expect(() =>
      decodeStoredRelease(stored(Buffer.from('{"name":1}')), 'apps/sh.helm.release.v1.web.v3'),
    ).toThrow("helm's release record apps/sh.helm.release.v1.web.v3 cannot be read");
  });
});
