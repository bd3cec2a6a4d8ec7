import { execFile } from 'node:child_process';
import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const script = path.resolve(__dirname, '../../deploy/tools/build.sh');

/** Runs `npm run tools`' script in a scratch cache and bin dir with the given environment. */
async function runTools(env: Record<string, string>) {
  const scratch = await mkdtemp(path.join(tmpdir(), 'armada-tools-test-'));
  const merged = {
    ...process.env,
    ARMADA_TOOLS_CACHE: path.join(scratch, 'cache'),
    ARMADA_TOOLS_BIN: path.join(scratch, 'bin'),
    ...env,
  };
  try {
    const { stdout, stderr } = await promisify(execFile)('bash', [script], { env: merged });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

async function fakeBinary(output: string): Promise<string> {
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'armada-fake-')), 'tool');
  await writeFile(file, `#!/bin/sh\necho '${output}'\n`);
  await chmod(file, 0o755);
  return file;
}

describe('npm run tools', () => {
  it('refuses an override that reports another version than the pinned one, naming both', async () => {
    const wrongHelm = await fakeBinary('v3.0.0');
    const { code, stderr } = await runTools({ ARMADA_HELM: wrongHelm });
    expect(code).toBe(1);
    expect(stderr).toContain(`ARMADA_HELM=${wrongHelm} reports v3.0.0, but v4.`);
  });

  it('without Go and without the tools, stops with one message that says how to provide them', async () => {
    const { code, stderr } = await runTools({ PATH: '/usr/bin:/bin' });
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/not available: .*temporal.*Install Go >= 1\.25 .*ARMADA_<TOOL>/);
  });
});
