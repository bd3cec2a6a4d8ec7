import { kinds, type KindName } from '../api/kinds';
import { canaryWorkflowId, objectWorkflowId } from '../workflows/plan/names';

/** The workflow of a manifest: its ID is its lock, so one manifest has one run at a time. */
export function manifestWorkflowId(namespace: string, name: string): string {
  return objectWorkflowId('ArmadaManifest', namespace, name);
}

/** An object a command line names, and the workflow that runs it. */
export interface Target {
  kind: KindName;
  namespace: string;
  name: string;
  /** The workflow steered by status, watch and the control commands (an ArmadaChart's canary). */
  workflowId: string;
}

/**
 * The object a command line names: `NAME` or `amf/NAME` (an ArmadaManifest), `dpl/NAME` (a
 * Deployer), `act/NAME` (an ArmadaChart, steered through its canary), `acg/NAME` (a group no
 * manifest lists; a manifest's groups are steered through the manifest). Kinds go by name,
 * plural, singular or short name, as kubectl takes them.
 */
export function resolveTarget(target: string, namespace: string): Target {
  const slash = target.indexOf('/');
  if (slash < 0)
    return {
      kind: 'ArmadaManifest',
      namespace,
      name: target,
      workflowId: manifestWorkflowId(namespace, target),
    };
  const [kindName, name] = [target.slice(0, slash).toLowerCase(), target.slice(slash + 1)];
  const kind = (Object.keys(kinds) as KindName[]).find((k) => {
    const names = kinds[k];
    return [k.toLowerCase(), names.plural, names.singular, ...names.shortNames].includes(kindName);
  });
  if (kind === undefined)
    throw new Error(
      `unknown kind "${target.slice(0, slash)}" in ${target}; use amf/NAME, acg/NAME, act/NAME or dpl/NAME`,
    );
  const workflowId =
    kind === 'ArmadaChart' ? canaryWorkflowId(namespace, name) : objectWorkflowId(kind, namespace, name);
  return { kind, namespace, name, workflowId };
}

/** The workflow ID of the run a command line names (see resolveTarget). */
export function targetWorkflowId(target: string, namespace: string): string {
  return resolveTarget(target, namespace).workflowId;
}

/** The error for a target that has never run, saying how to start it. */
export function noRun(what: string, cause?: unknown): Error {
  return new Error(`no run of ${what}; start one with \`armadactl apply\``, { cause });
}
