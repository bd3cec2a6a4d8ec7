import type { TestWorkflowEnvironment } from '@temporalio/testing';

export default async function globalTeardown(): Promise<void> {
  const env = (globalThis as { __temporal__?: TestWorkflowEnvironment }).__temporal__;
  await env?.teardown();
}
