import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { variable } from '../../core/environment';

/**
 * The key of the release digests (activities/charts/digest.ts keyedDigest): its own, not a
 * payload encryption key. Payload keys rotate (runs/codec.ts), and a new digest key makes every
 * release's recorded digest differ from its inputs' — every release would be upgraded once. So
 * this key is made once and kept: the operator chart generates it into a Secret at install and
 * keeps it across upgrades; a worker given none creates one once in a file of its own and reuses
 * it. Every worker of a task queue must hold the same key, else releases read as changed on the
 * workers that do not.
 */

/** How many random bytes a created key has, and the least a configured one must have. */
const KEY_BYTES = 32;

/**
 * Where the key is kept when `ARMADA_DIGEST_KEY_FILE` is unset:
 * `$XDG_STATE_HOME/armada-temporal/digest.key` (else `~/.local/state/...`): state that must
 * outlive the process, never a temporary directory.
 */
export function defaultDigestKeyFile(env: NodeJS.ProcessEnv = process.env): string {
  const state = variable(env, 'XDG_STATE_HOME') || path.join(homedir(), '.local', 'state');
  return path.join(state, 'armada-temporal', 'digest.key');
}

/** The key in a key file's text: base64 of at least 32 bytes, surrounding white space ignored. */
export function parseDigestKey(text: string, file: string): Buffer {
  const encoded = text.trim();
  const key = Buffer.from(encoded, 'base64');
  const problem = !/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)
    ? 'is not base64'
    : key.length < KEY_BYTES
      ? `holds ${key.length} bytes; a digest key needs at least ${KEY_BYTES}`
      : undefined;
  if (problem) throw new Error(`invalid configuration:\ndigest key file ${file} ${problem}`);
  return key;
}

/** The key file's text, or undefined when it does not exist. */
function readKeyFile(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(
      `invalid configuration:\ndigest key file ${file} cannot be read (${(err as NodeJS.ErrnoException).code})`,
      { cause: err },
    );
  }
}

/**
 * The digest key for a reader that must not make one (`armadactl diff`): that of
 * `ARMADA_DIGEST_KEY_FILE`, else of the default file; undefined when neither exists. A key made
 * up here would match no recorded digest.
 */
export function readDigestKey(env: NodeJS.ProcessEnv = process.env): Buffer | undefined {
  const file = variable(env, 'ARMADA_DIGEST_KEY_FILE') || defaultDigestKeyFile(env);
  const text = readKeyFile(file);
  return text === undefined ? undefined : parseDigestKey(text, file);
}

/**
 * The worker's digest key and where it comes from. `ARMADA_DIGEST_KEY_FILE` must exist (a
 * missing mount is an error, not a reason for a new key). Unset: the default file, created on
 * first use with 32 random bytes, mode 0600, linked into place whole so that two workers
 * starting together end up with the one key.
 */
export function loadDigestKey(env: NodeJS.ProcessEnv = process.env): {
  key: Buffer;
  file: string;
  created: boolean;
} {
  const configured = variable(env, 'ARMADA_DIGEST_KEY_FILE');
  if (configured) {
    const text = readKeyFile(configured);
    if (text === undefined)
      throw new Error(`invalid configuration:\nARMADA_DIGEST_KEY_FILE: ${configured} does not exist`);
    return { key: parseDigestKey(text, configured), file: configured, created: false };
  }
  const file = defaultDigestKeyFile(env);
  const existing = readKeyFile(file);
  if (existing !== undefined) return { key: parseDigestKey(existing, file), file, created: false };
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const staged = `${file}.${process.pid}.new`;
  writeFileSync(staged, `${randomBytes(KEY_BYTES).toString('base64')}\n`, { mode: 0o600 });
  let created = true;
  try {
    linkSync(staged, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    created = false; // another process made it first: use theirs
  } finally {
    unlinkSync(staged);
  }
  return { key: parseDigestKey(readFileSync(file, 'utf8'), file), file, created };
}

let workerKey: ReturnType<typeof loadDigestKey> | undefined;

/** This worker process's digest key (loadDigestKey), loaded once, with where it comes from. */
export function workerDigestKey(): ReturnType<typeof loadDigestKey> {
  return (workerKey ??= loadDigestKey());
}

/** This worker process's digest key. */
export function digestKey(): Buffer {
  return workerDigestKey().key;
}
