import { TestWorkflowEnvironment } from '@temporalio/testing';
import { toolPath } from '../../activities/tools';
import { searchAttributes } from '../../workflows/search-attributes';

/**
 * Starts a real `temporal server start-dev` from the locally built CLI (never a download), with
 * the project's search attributes registered. The caller tears it down.
 */
export function startTemporal(): Promise<TestWorkflowEnvironment> {
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: toolPath('temporal') },
      ip: '127.0.0.1',
      searchAttributes,
    },
  });
}
