import { existsSync } from 'node:fs';
import path from 'node:path';
import { toolVariable } from '../core/environment';

/** The project's root: the nearest folder up with a package.json (from source or from dist/). */
function findRepoRoot(from: string): string {
  for (let dir = from; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
  }
  return from;
}

const repoRoot = findRepoRoot(__dirname);

/**
 * Path of a local-stack binary: `ARMADA_<TOOL>` when set (the same override `npm run tools`
 * honours), else the project's `.tools/bin/<tool>` when it was built, else the bare name on PATH
 * (as in the worker image).
 */
export function toolPath(tool: string): string {
  const override = process.env[toolVariable(tool)];
  if (override) return override;
  const local = path.join(repoRoot, '.tools', 'bin', tool);
  return existsSync(local) ? local : tool;
}
