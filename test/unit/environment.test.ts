import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DECLARED_VARIABLES, toolVariable, variable, type Reader } from '../../core/environment';
import { variablesOf } from '../../docs-tools/environment';
import { filesUnder, PRODUCT_FOLDERS } from '../../docs-tools/links';

const root = path.resolve(__dirname, '../..');
const READERS: Reader[] = ['worker', 'bridge', 'armadactl', 'codec server', 'local stack'];

/** Each variable a source reads by name (`env.NAME`, `env['NAME']`, `env?.NAME`), with where. */
function variableReads(): { name: string; at: string }[] {
  return PRODUCT_FOLDERS.flatMap((dir) => filesUnder(root, dir, '.ts')).flatMap((file) =>
    readFileSync(path.join(root, file), 'utf8')
      .split('\n')
      .flatMap((line, i) =>
        [...line.matchAll(/\benv\??\.([A-Z][A-Z0-9_]*)\b|\benv\[\s*['"]([A-Z][A-Z0-9_]*)['"]\s*\]/g)].map(
          (m) => ({ name: m[1] ?? m[2], at: `${file}:${i + 1}` }),
        ),
      ),
  );
}

describe('environment variables', () => {
  const documented = new Set(READERS.flatMap((reader) => variablesOf(reader).map((row) => row.name)));

  it('every variable the product reads by name is in a config schema or core/environment.ts', () => {
    const reads = variableReads();
    expect(reads.length).toBeGreaterThan(10);
    expect(reads.filter((read) => !documented.has(read.name))).toEqual([]);
  });

  it('every variable has a meaning for each process that reads it', () => {
    const unexplained = READERS.flatMap((reader) =>
      variablesOf(reader)
        .filter((row) => !row.meaning)
        .map((row) => `${reader}: ${row.name}`),
    );
    expect(unexplained).toEqual([]);
  });

  it('lists the worker’s, the bridge’s and armadactl’s own, with their defaults', () => {
    const row = (reader: Reader, name: string) => variablesOf(reader).find((r) => r.name === name);
    expect(row('worker', 'ARMADA_METRICS_PORT')?.default).toBe('`9465`');
    expect(row('bridge', 'ARMADA_METRICS_PORT')?.default).toBe('`9464`');
    expect(row('bridge', 'ARMADA_RESYNC_SECONDS')?.default).toBe('`300`');
    expect(row('armadactl', 'TEMPORAL_ADDRESS')).toBeDefined();
    expect(row('armadactl', 'ARMADA_KUBECONFIG')).toBeUndefined();
    expect(row('codec server', 'ARMADA_CODEC_PORT')?.default).toBe('`8888`');
  });

  it('reads a declared variable with empty as unset, and names a tool’s override', () => {
    expect(variable({ ARMADA_CHARTS_ROOT: '/charts' }, 'ARMADA_CHARTS_ROOT')).toBe('/charts');
    expect(variable({ ARMADA_CHARTS_ROOT: '' }, 'ARMADA_CHARTS_ROOT')).toBeUndefined();
    expect(toolVariable('kube-apiserver')).toBe('ARMADA_KUBE_APISERVER');
    expect(DECLARED_VARIABLES['ARMADA_<TOOL>'].readers).toContain('worker');
  });
});
