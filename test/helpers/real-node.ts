import { readFileSync } from 'node:fs';
import path from 'node:path';

/** The sandbox's real node (deploy/sandbox/node.sh), as `npm test` starts it. */
export const REAL_NODE = 'real-node';
/** Its taint and label: only pods that tolerate it land there. */
export const REAL_NODE_TAINT = 'armada.airshipit.org/real-node';

/** What node.sh chose at its first start (its node.env, beside the sandbox's kubeconfig). */
export function nodeSettings(): Record<string, string> {
  const file = path.join(path.dirname(process.env.KUBECONFIG ?? ''), 'node', 'node.env');
  return Object.fromEntries(
    readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('=', 2) as [string, string]),
  );
}
