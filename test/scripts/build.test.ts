import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const script = path.resolve(__dirname, '../../deploy/build.sh');

/**
 * deploy/build.sh in a scratch checkout whose compiler and bundler are stand-ins that log their
 * calls (the real ones run in every suite's global setup): what is tested is when it builds.
 */
async function scratchCheckout() {
  const root = await mkdtemp(path.join(tmpdir(), 'armada-build-test-'));
  const calls = path.join(root, 'calls.log');
  await mkdir(path.join(root, 'deploy'));
  await cp(script, path.join(root, 'deploy', 'build.sh'));
  for (const dir of [
    'api',
    'core',
    'workflows',
    'activities',
    'kube',
    'runs',
    'worker',
    'bridge',
    'cli',
    'test',
    'bench',
  ])
    await mkdir(path.join(root, dir));
  await writeFile(path.join(root, 'workflows', 'index.ts'), 'export {};\n');
  await writeFile(path.join(root, 'tsconfig.json'), '{}\n');
  await writeFile(path.join(root, 'package-lock.json'), '{}\n');
  // The compiler writes dist/worker/bundle.js and dist/cli/bundle.js, which write the bundle they
  // are given; all three log.
  const bundler = (name: string) =>
    `require('fs').appendFileSync(${JSON.stringify(calls)}, '${name}\\n'); require('fs').writeFileSync(process.argv[2], '');`;
  await mkdir(path.join(root, 'node_modules', 'typescript', 'bin'), { recursive: true });
  await writeFile(
    path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'),
    `const fs = require('fs');
fs.appendFileSync(${JSON.stringify(calls)}, 'tsc\\n');
if (fs.existsSync(${JSON.stringify(path.join(root, 'broken'))})) { console.error('error TS2322'); process.exit(2); }
fs.mkdirSync('dist/worker', { recursive: true });
fs.writeFileSync('dist/worker/bundle.js', ${JSON.stringify(bundler('bundle'))});
fs.mkdirSync('dist/cli', { recursive: true });
fs.writeFileSync('dist/cli/bundle.js', ${JSON.stringify(bundler('armadactl'))});
`,
  );
  const build = async () => {
    try {
      await promisify(execFile)('bash', [path.join(root, 'deploy', 'build.sh')]);
      return 0;
    } catch (err) {
      return (err as { code: number }).code;
    }
  };
  const calledSinceLast = async () => {
    const logged = await readFile(calls, 'utf8').catch(() => '');
    await writeFile(calls, '');
    return logged.split('\n').filter(Boolean);
  };
  return { root, build, calledSinceLast };
}

describe('npm run build (deploy/build.sh): compile and bundle only when the build is stale', () => {
  it('builds a checkout without dist/, then nothing until a source changes', async () => {
    const { root, build, calledSinceLast } = await scratchCheckout();
    expect(await build()).toBe(0);
    expect(await calledSinceLast()).toEqual(['tsc', 'bundle', 'armadactl']);
    expect(await build()).toBe(0);
    expect(await calledSinceLast()).toEqual([]);

    // A workflow edited after the build (its time set ahead: the file system's clock is coarse).
    const edited = path.join(root, 'workflows', 'index.ts');
    const later = new Date(Date.now() + 5_000);
    await utimes(edited, later, later);
    expect(await build()).toBe(0);
    expect(await calledSinceLast()).toEqual(['tsc', 'bundle', 'armadactl']);
  });

  it('builds once when two builds start together (a test run and a benchmark)', async () => {
    const { build, calledSinceLast } = await scratchCheckout();
    expect(await Promise.all([build(), build()])).toEqual([0, 0]);
    expect(await calledSinceLast()).toEqual(['tsc', 'bundle', 'armadactl']);
  });

  it('after a failed compile, builds again the next time', async () => {
    const { root, build, calledSinceLast } = await scratchCheckout();
    await writeFile(path.join(root, 'broken'), '');
    expect(await build()).not.toBe(0);
    expect(await calledSinceLast()).toEqual(['tsc']);
    await rm(path.join(root, 'broken'));
    expect(await build()).toBe(0);
    expect(await calledSinceLast()).toEqual(['tsc', 'bundle', 'armadactl']);
  });
});
