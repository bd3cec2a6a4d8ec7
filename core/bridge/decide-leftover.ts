import { generationIn, type RunMemo } from '../plan/specs';

/**
 * A run that may have left a chart's unprefixed release behind (the chart's own run
 * `ArmadaChart:<namespace>/<name>`, or one under the release's `helm:<namespace>/<release>`), as
 * Temporal describes it: what decideLeftover reads of it.
 */
export interface ReleaseRun {
  memo: RunMemo;
  /** Temporal's status: RUNNING, COMPLETED, FAILED, ... */
  status: string;
  /** The workflow ID of the run that started it as a child (a group's run), if any. */
  parent?: string;
  /** Its ArmadaKind, ArmadaNamespace and ArmadaName search attributes: the object it ran for. */
  object: { kind?: string; namespace?: string; name?: string };
}

/** What to do about the unprefixed release a chart's standalone runs may have left behind. */
export type LeftoverDecision =
  /** Nothing left of the chart here: not its own standalone run's, or an uninstall completed. */
  | { do: 'none'; why: 'not its own' | 'uninstalled' }
  /** Its uninstall runs: follow it. */
  | { do: 'follow' }
  /** Its deploy runs: cancel it, then look again when it ends. */
  | { do: 'cancel' }
  /** Its deploy ended: uninstall the release. */
  | { do: 'uninstall' }
  /** Its uninstall failed, run with the chart's generation `ranWith`: retry it, after the backoff (leftover-retries.ts). */
  | { do: 'retry'; ranWith: number };

/**
 * Whether the run `run` of a chart's unprefixed release was this chart's own standalone run (or
 * a child of a standalone run of one of `groupRuns`, its manifest's groups), and what is left
 * to do about it (see bridge/standalone.ts, clearStandaloneLeftovers).
 */
export function decideLeftover(
  chart: { namespace: string; name: string },
  groupRuns: readonly string[],
  run: ReleaseRun,
): LeftoverDecision {
  const ranWith = generationIn(run.memo.specs, 'ArmadaChart', chart.name);
  const { parent, object } = run;
  const itsOwn = parent
    ? groupRuns.includes(parent)
    : object.kind === 'ArmadaChart' && object.namespace === chart.namespace && object.name === chart.name;
  if (ranWith === undefined || !itsOwn) return { do: 'none', why: 'not its own' };
  const running = run.status === 'RUNNING';
  if (run.memo.mode === 'uninstall') {
    if (running) return { do: 'follow' };
    if (run.status === 'COMPLETED') return { do: 'none', why: 'uninstalled' };
    return { do: 'retry', ranWith };
  }
  return running ? { do: 'cancel' } : { do: 'uninstall' };
}
