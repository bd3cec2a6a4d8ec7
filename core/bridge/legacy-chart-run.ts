/**
 * Runs of a standalone ArmadaChart that an older build started (docs/how-to/scale-and-upgrade.md, "Worker upgrades"): it ran
 * the chart as `chartWorkflow` under its release's ID, `helm:<namespace>/<release>`; this build
 * runs it as `deployRun` under the chart's own ID, `ArmadaChart:<namespace>/<name>` (its release
 * lock, core/plan/release-lock.ts). Until the chart has a run under its own ID, the bridge reads
 * the latest run under the old one (bridge/legacy-chart-run.ts), so that neither is an old run
 * in flight lost nor one that ended run again:
 * - running (whoever started it: it writes the release): it holds the release, so the chart's
 *   new run waits for it, as for a run under its own ID (the bridge follows it, a deletion
 *   cancels it) and nothing is started beside it;
 * - ended, and the chart's own (no parent run, its search attributes name the chart): its memo
 *   says which specs have had their run, as the latest run under the chart's own ID would;
 * - ended, and another's (a group's chart child): none.
 * Once a run under the chart's own ID exists, the old ID is not read again.
 */

/** The latest run under the old ID, as Temporal describes it. */
export interface LegacyChartRun {
  running: boolean;
  /** The workflow ID of the run that started it as a child (a group's run), if any. */
  parent?: string;
  /** Its ArmadaKind, ArmadaNamespace and ArmadaName search attributes: the object it ran for. */
  object: { kind?: string; namespace?: string; name?: string };
}

/** Whether the latest run under a chart's old ID stands for the chart's latest run (see above). */
export function legacyRunCounts(
  chart: { namespace: string; name: string },
  run: LegacyChartRun | null,
): boolean {
  if (!run) return false;
  if (run.running) return true;
  const { object } = run;
  return (
    run.parent === undefined &&
    object.kind === 'ArmadaChart' &&
    object.namespace === chart.namespace &&
    object.name === chart.name
  );
}
