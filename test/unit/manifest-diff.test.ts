import { sha256Hex } from '../../activities/charts/digest';
import { MASK, MASK_CHANGED, MASK_NEW, manifestDiff, maskSecret } from '../../cli/manifest-diff';

const configMap = (level: string) => `---
# Source: settings/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: web
data:
  logLevel: ${level}
  color: blue
`;

const secret = (data: Record<string, string>) => `---
apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: other
stringData:
${Object.entries(data)
  .map(([k, v]) => `  ${k}: ${v}`)
  .join('\n')}
`;

describe('maskSecret', () => {
  const live = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db' }, data: { a: 'eA==' } };

  it('masks every data and stringData value, and only those', () => {
    const masked = maskSecret({ ...live, stringData: { b: 'y' }, type: 'Opaque' });
    expect(masked).toEqual({ ...live, data: { a: MASK }, stringData: { b: MASK }, type: 'Opaque' });
  });

  it('marks values by their digests against the live Secret: the same, changed, new', () => {
    const liveDigests = new Map([
      ['data.a', sha256Hex('eA==')],
      ['data.b', sha256Hex('b2xk')],
    ]);
    const next = { ...live, data: { a: 'eA==', b: 'bmV3', c: 'eg==' } };
    expect(maskSecret(next, liveDigests).data).toEqual({ a: MASK, b: MASK_CHANGED, c: MASK_NEW });
  });

  it('leaves objects other than Secrets alone', () => {
    const map = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { a: 'b' } };
    expect(maskSecret(map)).toBe(map);
  });
});

describe('manifestDiff', () => {
  it('is empty when the objects are the same, whatever the comments and document order', () => {
    const a = `${configMap('info')}${secret({ password: 'p1' })}`;
    const b = `${secret({ password: 'p1' })}${configMap('info').replace('# Source: settings/templates/configmap.yaml\n', '')}`;
    expect(manifestDiff(a, b, 'apps')).toEqual([]);
  });

  it('shows a changed value as a unified diff of the object, named by kind, namespace and name', () => {
    const [diff] = manifestDiff(configMap('info'), configMap('debug'), 'apps');
    expect(diff.object).toBe('ConfigMap/apps/web');
    expect(diff.change).toBe('changed');
    expect(diff.patch).toBe(
      [
        '--- live/ConfigMap/apps/web',
        '+++ wanted/ConfigMap/apps/web',
        '@@ -2,6 +2,6 @@',
        ' kind: ConfigMap',
        ' metadata:',
        '   name: web',
        ' data:',
        '-  logLevel: info',
        '+  logLevel: debug',
        '   color: blue',
        '',
      ].join('\n'),
    );
  });

  it('never prints a Secret value, marking the changed and new ones and keeping the same ones equal', () => {
    const [diff] = manifestDiff(
      secret({ password: 's3cret-one', user: 'admin-user' }),
      secret({ password: 's3cret-two', user: 'admin-user', token: 'tok-tok-tok' }),
      'apps',
    );
    expect(diff.object).toBe('Secret/other/db');
    expect(diff.patch).not.toMatch(/s3cret|admin-user|tok-tok/);
    const changed = diff.patch.split('\n').filter((l) => /^[-+] /.test(l));
    expect(changed).toEqual([
      `-  password: "${MASK}"`,
      `+  password: "${MASK_CHANGED}"`,
      `+  token: "${MASK_NEW}"`,
    ]);
  });

  it('shows an object only one side has as added or removed, against /dev/null', () => {
    const diffs = manifestDiff(configMap('info'), secret({ password: 'p' }), 'apps');
    expect(diffs.map((d) => [d.object, d.change])).toEqual([
      ['ConfigMap/apps/web', 'removed'],
      ['Secret/other/db', 'added'],
    ]);
    expect(diffs[0].patch.split('\n').slice(0, 2)).toEqual(['--- live/ConfigMap/apps/web', '+++ /dev/null']);
    expect(diffs[1].patch).toContain(`+  password: "${MASK}"`);
    expect(diffs[1].patch).not.toContain('password: p\n');
  });

  it('compares a whole install against nothing and a whole uninstall to nothing', () => {
    expect(manifestDiff('', configMap('info'), 'apps').map((d) => d.change)).toEqual(['added']);
    expect(manifestDiff(configMap('info'), '', 'apps').map((d) => d.change)).toEqual(['removed']);
  });
});
