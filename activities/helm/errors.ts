import { ApplicationFailure } from '@temporalio/common';
import { DOC_PAGES, pointingTo } from '../../core/doc-pages';
import { NonRetryable } from '../../core/failures';

/** Failure type for a helm error worth retrying (timeouts, API server unavailable, conflicts). */
export const HELM_COMMAND_FAILED = 'HelmCommandFailed';

const rules: ReadonlyArray<[RegExp, string]> = [
  [
    /path ".*" not found|Chart\.yaml file is missing|chart ".*" not found|no such file or directory/i,
    NonRetryable.ChartNotFound,
  ],
  [
    /parse error|YAML parse error|error converting YAML|unable to build kubernetes objects|template: /i,
    NonRetryable.InvalidChart,
  ],
  // The API server refused an object the chart renders: the same render is refused again.
  [/" is invalid: |failed to create typed patch object/i, NonRetryable.InvalidChart],
  [/forbidden/i, NonRetryable.Forbidden],
  // helm's watcher (kstatus) names a resource that reached Failed, e.g. "resource
  // Pod/apps/web-test not ready. status: Failed, message: pod web-test failed" (`helm test`, or
  // a post-install hook); one still InProgress at its timeout is retried.
  [/ not ready\. status: Failed\b/, NonRetryable.HelmResourceFailed],
];

/**
 * What helm answers for a release left pending-install, -upgrade or -rollback (a helm killed
 * mid-operation, by hand or elsewhere): it refuses every operation on it.
 */
const RELEASE_PENDING = /another operation \(install\/upgrade\/rollback\) is in progress/;

/** The failure type for helm's error output: one of `NonRetryable`, or HELM_COMMAND_FAILED. */
export function classifyHelmError(output: string): string {
  return rules.find(([pattern]) => pattern.test(output))?.[1] ?? HELM_COMMAND_FAILED;
}

/** An ApplicationFailure for a helm command that exited non-zero, carrying helm's last lines. */
export function helmFailure(
  args: readonly string[],
  exitCode: number | null,
  output: string,
): ApplicationFailure {
  const type = classifyHelmError(output);
  const said = `helm ${args.slice(0, 2).join(' ')} failed (exit ${exitCode}): ${output.trimEnd()}`;
  const message = RELEASE_PENDING.test(output) ? pointingTo(said, DOC_PAGES.troubleshooting) : said;
  return ApplicationFailure.create({
    message,
    type,
    nonRetryable: type !== HELM_COMMAND_FAILED,
    details: [{ args: [...args], exitCode }],
  });
}
