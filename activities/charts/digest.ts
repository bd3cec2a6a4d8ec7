import { createHash, createHmac } from 'node:crypto';
import { stableJson } from '../../core/stable-json';

/** sha256 of some text or bytes, as 64 lower-case hex digits. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * The unkeyed digest of one release's inputs: sha256 hex of `chartDigest + '\n' +
 * stableJson(values ?? {})`. It changes when the chart's content or any value changes, and only
 * then (key order, and "no values" versus `{}`, make no difference). armada recorded it in
 * releases before their digests were keyed; since then only keyedDigest's HMAC of it leaves the
 * worker, since anyone who reads a release could test guesses of a Secret's value against a
 * plain hash.
 */
export function unkeyedReleaseDigest(chartDigest: string, values: unknown): string {
  return sha256Hex(`${chartDigest}\n${stableJson(values ?? {})}`);
}

/** What a keyed release digest starts with: a reader tells it from an unkeyed one by it. */
export const KEYED_DIGEST_PREFIX = 'hmac-sha256:';

/**
 * The keyed release digest (key: activities/charts/digest-key.ts): `hmac-sha256:` +
 * HMAC-SHA256(key, unkeyed) in hex. It changes exactly when the unkeyed digest does; without the
 * key it tells nothing about the values. The chart workflow records it in the release so an
 * unchanged apply can be skipped.
 */
export function keyedDigest(unkeyed: string, key: Uint8Array): string {
  return `${KEYED_DIGEST_PREFIX}${createHmac('sha256', key).update(unkeyed).digest('hex')}`;
}

/** Whether a recorded digest is an unkeyed one, as armada recorded them before digests were keyed. */
export function isUnkeyedDigest(recorded: string | undefined): recorded is string {
  return recorded !== undefined && /^[0-9a-f]{64}$/.test(recorded);
}

/**
 * A digest recorded in a release, in the form keyedDigest gives: a keyed one as it is, an
 * unkeyed one (recorded before digests were keyed) keyed now. So a release recorded before
 * compares equal to the same chart and values, and is not upgraded for the change of form alone;
 * its next real upgrade records the keyed form. Anything else is returned as it is (it equals no
 * keyed digest).
 */
export function comparableDigest(recorded: string | undefined, key: Uint8Array): string | undefined {
  return isUnkeyedDigest(recorded) ? keyedDigest(recorded, key) : recorded;
}

/** One file of a chart directory: its path relative to the chart root, with `/` separators. */
export interface TreeFile {
  path: string;
  content: Uint8Array;
}

/**
 * The content digest of a directory tree: sha256 hex over the files sorted by path (UTF-16 code
 * unit order), each written as `path NUL byteLength NUL bytes`, so no two different trees can
 * give the same input. The order the files are listed in makes no difference; names, bytes, an
 * added file or a removed file do. File modes, times and empty directories are not part of it.
 */
export function treeDigest(files: Iterable<TreeFile>): string {
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const hash = createHash('sha256');
  for (const file of sorted) {
    hash.update(`${file.path}\0${file.content.byteLength}\0`);
    hash.update(file.content);
  }
  return hash.digest('hex');
}
