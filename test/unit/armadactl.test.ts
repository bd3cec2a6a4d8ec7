import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../../cli/main';
import { formatProgress, targetWorkflowId } from '../../cli/runs';
import { canaryAtStep2 } from '../helpers/canary-progress';

async function run(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(
    argv,
    (line: string) => out.push(line),
    (line: string) => err.push(line),
  );
  return { code, out, err };
}

async function file(name: string, text: string): Promise<string> {
  const full = path.join(await mkdtemp(path.join(tmpdir(), 'armadactl-')), name);
  await writeFile(full, text);
  return full;
}

const validChart = `apiVersion: armada.airshipit.org/v1alpha1
kind: ArmadaChart
metadata: {name: web}
spec: {release: web, namespace: apps, source: {type: local, location: charts/web}}
`;

describe('armadactl validate', () => {
  it('accepts every example and exits 0', async () => {
    const { code, out } = await run('validate', '-f', path.resolve(__dirname, '../../examples'));
    expect(out.at(-1)).toBe('9 valid, 0 invalid');
    expect(code).toBe(0);
  });

  it('prints file:doc kind/name: path: reason for each problem of a multi-document file and exits 1', async () => {
    const bad = validChart.replace('release: web', 'release: Web').replace('name: web', 'name: web2');
    const f = await file(
      'two.yaml',
      `${validChart}---\n${bad}---\napiVersion: v1\nkind: Namespace\nmetadata: {name: apps}\n`,
    );
    const { code, out } = await run('validate', '-f', f);
    expect(out).toEqual([
      `${f}:2 ArmadaChart/web2: spec.release: a Helm release name must be lower case letters, digits and '-', starting and ending with a letter or digit`,
      '1 valid, 1 invalid, 1 skipped (not armada.airshipit.org)',
    ]);
    expect(code).toBe(1);
  });

  it('reports YAML syntax errors with their document', async () => {
    const f = await file('broken.yaml', 'kind: [unclosed\n');
    const { code, out } = await run('validate', '-f', f);
    expect(out[0]).toMatch(new RegExp(`^${f}:1 \\?: not valid YAML: `));
    expect(code).toBe(1);
  });

  it('says how to use it when -f is missing, and exits 2', async () => {
    const { code, err } = await run('validate');
    expect(err[0]).toContain('name at least one file or directory with -f');
    expect(code).toBe(2);
  });

  it('names a missing file', async () => {
    const { code, err } = await run('validate', '-f', '/nonexistent/x.yaml');
    expect(err[0]).toContain('/nonexistent/x.yaml');
    expect(code).toBe(2);
  });
});

describe('armadactl', () => {
  it('refuses an unknown command with the usage', async () => {
    const { code, err } = await run('deploy');
    expect(err[0]).toMatch(/unknown command "deploy"[\s\S]*armadactl validate/);
    expect(code).toBe(2);
  });
});

describe('armadactl targets and canary status', () => {
  it.each([
    ['demo', 'ArmadaManifest:ops/demo'],
    ['amf/demo', 'ArmadaManifest:ops/demo'],
    ['ArmadaManifest/demo', 'ArmadaManifest:ops/demo'],
    ['dpl/nginx', 'Deployer:ops/nginx'],
    ['deployers/nginx', 'Deployer:ops/nginx'],
    ['act/shop', 'ArmadaChart:ops/shop/canary'],
    ['armadachart/shop', 'ArmadaChart:ops/shop/canary'],
    ['acg/platform', 'ArmadaChartGroup:ops/platform'],
  ])('%s → workflow %s', (target, workflowId) => {
    expect(targetWorkflowId(target, 'ops')).toBe(workflowId);
  });

  it('refuses an unknown kind with what to name instead', () => {
    expect(() => targetWorkflowId('pod/x', 'ops')).toThrow(
      /unknown kind "pod" in pod\/x; use amf\/NAME, acg\/NAME, act\/NAME or dpl\/NAME/,
    );
  });

  it('prints a canary as its step and one line per step with split and times', () => {
    const lines = formatProgress({
      ...canaryAtStep2,
      paused: { by: 'ops', reason: 'dashboards', since: '2026-11-22T07:40:00.000Z', remainingSeconds: 20 },
    });
    expect(lines).toEqual([
      'blog-2: Progressing, step 2/3 at 30 % — paused since 2026-11-22T07:40:00.000Z by ops (dashboards), 20s of the hold left',
      '  step  percent  new/old   hold      started   ready     ended',
      '  1     10 %     1/9       1m        07:38:41  07:38:42  07:39:42 held',
      '▶ 2     30 %     3/7       approval  07:39:42',
      '  3     100 %    10/0      -',
    ]);
  });

  it('status of a target without a run says so and how to start one', async () => {
    const { code, err } = await run('status', 'acg/platform');
    expect(code).toBe(1);
    expect(err.join('\n')).toMatch(
      /no run of ArmadaChartGroup:default\/platform; start one with `armadactl apply`/,
    );
  });
});
