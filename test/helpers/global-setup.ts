import { bundleWorkflowCode } from '@temporalio/worker';
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startTemporal } from './temporal';

/**
 * Once per test run: one Temporal dev server and one workflow bundle, shared by every test file
 * through the environment (TEMPORAL_ADDRESS, ARMADA_TEST_TEMPORAL_UI, ARMADA_TEST_WORKFLOW_BUNDLE),
 * and dist/ compiled.
 */
export default async function globalSetup(): Promise<void> {
  const { env, uiUrl } = await startTemporal();
  (globalThis as { __temporal__?: unknown }).__temporal__ = env;
  process.env.TEMPORAL_ADDRESS = env.address;
  process.env.ARMADA_TEST_TEMPORAL_UI = uiUrl;

  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../workflows'),
    logger: { info() {}, warn: console.warn, error: console.error, debug() {}, trace() {}, log() {} },
  });
  const bundle = path.join(await mkdtemp(path.join(tmpdir(), 'armada-bundle-')), 'workflows.js');
  await writeFile(bundle, code);
  process.env.ARMADA_TEST_WORKFLOW_BUNDLE = bundle;

  // Tests that run the worker or the bridge as processes (crash drills, the bridge) run dist/,
  // compiled once here so that no two test files write it at the same time.
  await promisify(execFile)(
    process.execPath,
    [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.json'],
    {
      cwd: path.resolve(__dirname, '../..'),
    },
  );
}
