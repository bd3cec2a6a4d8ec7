import { asCaller } from '../kube/client';
import { connect } from '../runs/connect';
import { resolveTarget } from '../runs/targets';
import { asJson, json, namespaceOption, outputOption, UsageError, type Command } from './command';
import { diffExitCode, diffScope, formatDiff, scopeOfFile, scopeOfObject } from './diff';

/**
 * The verbs of day two (README, "Day-two operations"): see what a run would change, list and
 * inspect objects and their runs, cancel a run, delete an object. Each acts as the person
 * running armadactl (asCaller: their own kubeconfig, never ARMADA_KUBECONFIG).
 */
export const dayTwoCommands: Record<string, Command> = {
  diff: {
    usage: `armadactl diff -f FILE | TARGET [-n NAMESPACE] [--manifest NAME] [--output json]

Shows what a run would do to each Helm release, and writes nothing: install, upgrade, unchanged,
uninstall, recover first (a release left pending) or refused (a release armada-temporal may not
touch, a failed protected one), decided by the run's own planner from the release's recorded
digest; for an install, upgrade or uninstall, a unified diff per object of the manifest helm
holds against the one the run would write (helm upgrade --dry-run=server with the run's own
arguments, chart and merged values), Secret values masked (*** and, against the live value,
(changed) or (new)); for a canary upgrade, its steps and each step's replica split.
-f FILE: the file armadactl apply would run (validated first). TARGET: an object on the cluster
(NAME or amf/NAME, acg/NAME, act/NAME), diffed as the bridge would run it; a group or chart a
manifest lists is diffed as part of the manifest's run. A whole manifest also lists the releases
its last run deployed that it no longer lists: a run leaves those installed.
Runs here, as you: charts are prepared as the worker prepares them (local charts under
ARMADA_CHARTS_ROOT, else the working directory), and helm and values_from read the cluster with
your own kubeconfig (KUBECONFIG, else ~/.kube/config; never ARMADA_KUBECONFIG).
Exit code as diff's: 0 when every release is unchanged, 1 when a run would change something,
2 on an error. --output json (-o json): {releases: [{object, release, mode, action, revision,
reason, objects: [{object, change, patch}], canary, error}], unlisted: [{chart, release}], notes}.`,
    options: {
      filename: { type: 'string', short: 'f' },
      manifest: { type: 'string' },
      ...outputOption,
      ...namespaceOption,
    },
    failureExit: 2,
    async run({ values, positionals }, out) {
      const file = values.filename as string | undefined;
      if (file ? positionals.length : positionals.length !== 1)
        throw new UsageError('name a file with -f, or one object: NAME, amf/NAME, acg/NAME or act/NAME');
      const asked = asJson(values);
      const namespace = values.namespace as string;
      const report = await asCaller(async () =>
        diffScope(
          file
            ? await scopeOfFile(file, namespace, values.manifest as string | undefined)
            : await scopeOfObject(resolveTarget(positionals[0], namespace)),
          connect,
        ),
      );
      if (asked) out(json(report));
      else formatDiff(report).forEach((line) => out(line));
      return diffExitCode(report);
    },
  },
};
