import { bundleWorkflowCode } from '@temporalio/worker';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTemporal } from './temporal';

/**
 * Once per test run: one Temporal dev server and one workflow bundle, shared by every test file
 * through the environment (TEMPORAL_ADDRESS, ARMADA_TEST_WORKFLOW_BUNDLE).
 */
export default async function globalSetup(): Promise<void> {
  const env = await startTemporal();
  (globalThis as { __temporal__?: unknown }).__temporal__ = env;
  process.env.TEMPORAL_ADDRESS = env.address;

  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../workflows'),
    logger: { info() {}, warn: console.warn, error: console.error, debug() {}, trace() {}, log() {} },
  });
  const bundle = path.join(await mkdtemp(path.join(tmpdir(), 'armada-bundle-')), 'workflows.js');
  await writeFile(bundle, code);
  process.env.ARMADA_TEST_WORKFLOW_BUNDLE = bundle;
}
