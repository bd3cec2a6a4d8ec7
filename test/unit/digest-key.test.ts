import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  defaultDigestKeyFile,
  loadDigestKey,
  parseDigestKey,
  readDigestKey,
} from '../../activities/charts/digest-key';

describe('the release digest key', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'digest-key-'));
  });
  const stateHome = () => ({ XDG_STATE_HOME: dir });

  it('is kept under $XDG_STATE_HOME/armada-temporal when ARMADA_DIGEST_KEY_FILE is unset', () => {
    expect(defaultDigestKeyFile(stateHome())).toBe(path.join(dir, 'armada-temporal', 'digest.key'));
  });

  it('is created once, 32 random bytes readable by its owner only, and then reused', async () => {
    const first = loadDigestKey(stateHome());
    expect(first).toMatchObject({ file: defaultDigestKeyFile(stateHome()), created: true });
    expect(first.key).toHaveLength(32);
    expect((await stat(first.file)).mode & 0o777).toBe(0o600);
    const again = loadDigestKey(stateHome());
    expect(again.created).toBe(false);
    expect(again.key.equals(first.key)).toBe(true);
    expect(readDigestKey(stateHome())?.equals(first.key)).toBe(true);
  });

  it('is read from ARMADA_DIGEST_KEY_FILE, and nothing is created', async () => {
    const file = path.join(dir, 'mounted');
    await writeFile(file, `${Buffer.alloc(48, 1).toString('base64')}\n`);
    const env = { ...stateHome(), ARMADA_DIGEST_KEY_FILE: file };
    expect(loadDigestKey(env)).toEqual({ key: Buffer.alloc(48, 1), file, created: false });
    await expect(readFile(defaultDigestKeyFile(env))).rejects.toThrow(/ENOENT/);
  });

  it('fails the start when ARMADA_DIGEST_KEY_FILE names no file, rather than making a new key', () => {
    const missing = path.join(dir, 'not-mounted');
    expect(() => loadDigestKey({ ...stateHome(), ARMADA_DIGEST_KEY_FILE: missing })).toThrow(
      `invalid configuration:\nARMADA_DIGEST_KEY_FILE: ${missing} does not exist`,
    );
  });

  it('is not made up by a reader (armadactl diff): none when no file exists', () => {
    expect(readDigestKey(stateHome())).toBeUndefined();
  });

  it.each([
    ['not base64', 'not a key!', 'digest key file f is not base64'],
    [
      'too short',
      Buffer.alloc(16).toString('base64'),
      'digest key file f holds 16 bytes; a digest key needs at least 32',
    ],
  ])('refuses a key that is %s, naming the file', (_name, text, message) => {
    expect(() => parseDigestKey(text, 'f')).toThrow(`invalid configuration:\n${message}`);
  });
});
