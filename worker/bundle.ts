import { bundleWorkflowCode, type BundleOptions } from '@temporalio/worker';
import { writeFile } from 'node:fs/promises';

/**
 * The workflow code bundled as the worker bundles it at start without ARMADA_WORKFLOW_BUNDLE
 * (webpack, about 2 s of CPU), with webpack's chatter left out. From dist/ it bundles the
 * compiled dist/workflows, the code the build has just made; under ts-jest, the sources.
 * `workflowsPath`: another module to bundle (a benchmark's, which adds workflows of its own).
 */
export async function bundleWorkflows(
  webpackConfigHook?: BundleOptions['webpackConfigHook'],
  workflowsPath = require.resolve('../workflows'),
): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    webpackConfigHook,
    logger: { info() {}, warn: console.warn, error: console.error, debug() {}, trace() {}, log() {} },
  });
  return code;
}

/** `node dist/worker/bundle.js OUT` (deploy/build.sh): writes the bundle to OUT. */
async function main(out: string | undefined): Promise<void> {
  if (!out) throw new Error('usage: node dist/worker/bundle.js OUT');
  await writeFile(out, await bundleWorkflows());
}

if (require.main === module)
  main(process.argv[2]).catch((err: unknown) => {
    console.error(`bundling the workflows failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
