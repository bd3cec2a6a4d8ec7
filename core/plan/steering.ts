import { ed25519 } from '@noble/curves/ed25519';
import { utf8ToBytes } from '@noble/hashes/utils';

/**
 * Signed steering (docs/explanation/security.md): the bridge signs each pause, resume, approve,
 * promote and rollback it forwards with its Ed25519 key; the run carries the bridge's public key
 * (Carried.steering) and checks the proof here, synchronously and without I/O (pure JS Ed25519,
 * deterministic on replay). Steering without a valid proof came from some Temporal client: it is
 * a Temporal administrator's, recorded as `temporal-admin:<by>`, and never passes a gate with
 * `distinct_approvers` or `not_author`.
 */

/** A bridge's signature over one steering message: when it was issued (RFC 3339) and the signature (hex). */
export interface Proof {
  at: string;
  sig: string;
}

/** What a run knows of who may steer it and who wrote its specs. */
export interface Steering {
  /** The bridge's Ed25519 public key, hex (32 bytes raw); set at start, never replaced by a re-plan. */
  key?: string;
  /**
   * Who last changed each object's spec (`<Kind>/<name>`, e.g. `ArmadaChart/web`), from the
   * `armada.airshipit.org/author` annotation the admission policies keep; `not_author` reads it.
   */
  authors?: Record<string, string>;
}

/** How far a proof's issue time may be from the run's time, either way. */
export const PROOF_WINDOW_MS = 5 * 60_000;

/** How a steering message's `by` is recorded when no valid proof came with it. */
export const TEMPORAL_ADMIN = 'temporal-admin';

/** The steering fields a proof covers. */
export interface Signed {
  by?: string;
  gate?: string;
  reason?: string;
}

/** The exact text the bridge signs: the run's workflow ID, the verb and the message's fields, and the issue time. */
export function steeringText(workflowId: string, verb: string, req: Signed, at: string): string {
  return JSON.stringify([
    'armada-steering/1',
    workflowId,
    verb,
    req.by ?? '',
    req.gate ?? '',
    req.reason ?? '',
    at,
  ]);
}

/**
 * Why `proof` does not authenticate this message, or undefined when it does. `workflowIds`: the
 * run's own ID and its parent's and root's (a manifest passes a pause on to its group, a group
 * an approval to its canaries: the bridge signed it for the run it sent it to). `used`: the
 * signatures this run has taken already (a proof counts once).
 */
export function proofProblem(
  proof: Proof | undefined,
  key: string | undefined,
  check: {
    workflowIds: readonly string[];
    verb: string;
    req: Signed;
    nowMs: number;
    used: ReadonlySet<string>;
  },
): string | undefined {
  if (key === undefined)
    return 'the run was not started by a bridge, so it has no key to check steering against';
  if (!proof) return 'it carries no proof from the bridge';
  const at = Date.parse(proof.at);
  if (Number.isNaN(at)) return `its proof's time "${proof.at}" is not a time`;
  if (Math.abs(check.nowMs - at) > PROOF_WINDOW_MS)
    return `its proof was issued at ${proof.at}, more than ${PROOF_WINDOW_MS / 60_000} minutes from the run's time`;
  if (check.used.has(proof.sig)) return 'its proof was used before';
  const valid = check.workflowIds.some((id) =>
    verifies(proof.sig, utf8ToBytes(steeringText(id, check.verb, check.req, proof.at)), key),
  );
  return valid ? undefined : "its proof's signature does not match the bridge's key";
}

function verifies(sig: string, message: Uint8Array, key: string): boolean {
  try {
    return ed25519.verify(sig, message, key);
  } catch {
    return false; // not hex, wrong length: no proof at all
  }
}

/** How a steering message's sender is shown: the authenticated user, or `temporal-admin:<by>` (once: one passed on keeps its mark). */
export function recordedBy(by: string | undefined, authenticated: boolean): string | undefined {
  if (authenticated || by === TEMPORAL_ADMIN || by?.startsWith(`${TEMPORAL_ADMIN}:`)) return by;
  return by === undefined ? TEMPORAL_ADMIN : `${TEMPORAL_ADMIN}:${by}`;
}

/** The separation-of-duties rules of one gate (a manifest's `approval`, a canary's approval steps). */
export interface GateRules {
  /** Approvals by this many different authenticated users (`distinct_approvers`); 1 when absent. */
  distinctApprovers?: number;
  /** `not_author: true`: the spec's author may not approve. `author` absent: unknown (no admission policies). */
  notAuthor?: { object: string; author?: string };
}

/** The gate rules a spec's `distinct_approvers` and `not_author` ask for; `object` is `<Kind>/<name>`. */
export function gateRules(
  spec: { distinct_approvers?: number; not_author?: boolean },
  object: string,
  steering: Steering | undefined,
): GateRules | undefined {
  const distinct = spec.distinct_approvers !== undefined && spec.distinct_approvers > 1;
  if (!distinct && !spec.not_author) return undefined;
  const author = steering?.authors?.[object];
  return {
    ...(distinct && { distinctApprovers: spec.distinct_approvers }),
    ...(spec.not_author && { notAuthor: { object, ...(author !== undefined && { author }) } }),
  };
}

/** The rules' names as refusals name them: `distinct_approvers: 2`, `not_author`. */
export function ruleNames(rules: GateRules): string {
  return [
    ...(rules.distinctApprovers !== undefined ? [`distinct_approvers: ${rules.distinctApprovers}`] : []),
    ...(rules.notAuthor ? ['not_author'] : []),
  ].join(', ');
}

/**
 * Why a gate with `rules` refuses an approval by `by` (`unauthenticated`: why its proof failed,
 * if it did; `approvers`: who approved the gate already), or undefined when it may count.
 */
export function ruleRefusal(
  rules: GateRules,
  by: string | undefined,
  unauthenticated: string | undefined,
  approvers: readonly string[],
): string | undefined {
  const names = ruleNames(rules);
  if (unauthenticated !== undefined)
    return `${names}: this gate needs approvals the API server authenticated (through the bridge); this one came from a Temporal client (${recordedBy(by, false)}): ${unauthenticated}`;
  if (by === undefined) return `${names}: this gate needs to know who approves; the approval names no one`;
  const { notAuthor } = rules;
  if (notAuthor && notAuthor.author === undefined)
    return `not_author: the author of ${notAuthor.object} is unknown (the admission policies that record it are not installed), so no approval can pass this gate`;
  if (notAuthor && notAuthor.author === by)
    return `not_author: ${by} wrote this spec (${notAuthor.object}) and may not approve it`;
  if (rules.distinctApprovers !== undefined && approvers.includes(by))
    return `distinct_approvers: ${rules.distinctApprovers}: ${by} has approved already`;
  return undefined;
}
