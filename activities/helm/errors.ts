import { ApplicationFailure } from '@temporalio/common';

/**
 * The failure types workflows and the CLI branch on. Every other error is retried by Temporal
 * with the activity's retry policy; these are final because running the same command again
 * cannot succeed.
 */
export const NonRetryable = {
  /** The chart cannot be found or loaded (bad path, missing Chart.yaml, bad archive). */
  ChartNotFound: 'ChartNotFound',
  /** The chart's templates or the values do not render into valid manifests. */
  InvalidChart: 'InvalidChart',
  /** The API server refused for lack of permission (403). */
  Forbidden: 'Forbidden',
  /** The helm binary itself is missing. */
  HelmNotFound: 'HelmNotFound',
} as const;

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
  [/forbidden/i, NonRetryable.Forbidden],
];

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
  const message = `helm ${args.slice(0, 2).join(' ')} failed (exit ${exitCode}): ${output}`;
  return ApplicationFailure.create({
    message,
    type,
    nonRetryable: type !== HELM_COMMAND_FAILED,
    details: [{ args: [...args], exitCode }],
  });
}
