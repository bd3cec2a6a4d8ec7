import { defaultPayloadConverter } from '@temporalio/common';
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AesGcmCodec, KEY_ID_METADATA, loadKeys, parseKeys } from '../../runs/codec';

const key = (id: string) => ({ id, key: randomBytes(32) });
const payload = (value: unknown) => defaultPayloadConverter.toPayload(value);
const text = (bytes?: Uint8Array | null) => Buffer.from(bytes ?? []).toString('utf8');

describe('AesGcmCodec', () => {
  const secret = { values: { password: 's3cr3t' } };

  it('round-trips payloads, hiding their data and their own metadata', async () => {
    const codec = new AesGcmCodec([key('k1')]);
    const [sealed] = await codec.encode([payload(secret)]);
    expect(text(sealed.metadata?.encoding)).toBe('binary/encrypted');
    expect(text(sealed.metadata?.[KEY_ID_METADATA])).toBe('k1');
    expect(text(sealed.data)).not.toContain('s3cr3t');
    expect(text(sealed.data)).not.toContain('json/plain');
    const [opened] = await codec.decode([sealed]);
    expect(defaultPayloadConverter.fromPayload(opened)).toEqual(secret);
  });

  it('uses a fresh IV for every payload', async () => {
    const codec = new AesGcmCodec([key('k1')]);
    const [a, b] = await codec.encode([payload(secret), payload(secret)]);
    expect(Buffer.from(a.data!).equals(Buffer.from(b.data!))).toBe(false);
  });

  it('rotates: the first key encrypts, older keys still decrypt, an unknown key id is named', async () => {
    const old = key('2025');
    const current = key('2026');
    const [before] = await new AesGcmCodec([old]).encode([payload(secret)]);
    const rotated = new AesGcmCodec([current, old]);
    const [after] = await rotated.encode([payload(secret)]);
    expect(text(after.metadata?.[KEY_ID_METADATA])).toBe('2026');
    expect(
      (await rotated.decode([before, after])).map((p) => defaultPayloadConverter.fromPayload(p)),
    ).toEqual([secret, secret]);
    await expect(new AesGcmCodec([current]).decode([before])).rejects.toThrow(
      'payload encrypted with key "2025", which is not configured (ARMADA_ENCRYPTION_KEYS has: 2026)',
    );
  });

  it('detects a payload altered, or sealed by another key under the same id', async () => {
    const codec = new AesGcmCodec([key('k1')]);
    const [sealed] = await codec.encode([payload(secret)]);
    const altered = Buffer.from(sealed.data!);
    altered[20] ^= 1;
    await expect(codec.decode([{ ...sealed, data: altered }])).rejects.toThrow('does not authenticate');
    await expect(new AesGcmCodec([key('k1')]).decode([sealed])).rejects.toThrow('does not authenticate');
  });

  it('passes payloads that were never encrypted through decode (histories from before)', async () => {
    const plain = payload(secret);
    expect(await new AesGcmCodec([key('k1')]).decode([plain])).toEqual([plain]);
  });
});

describe('key configuration', () => {
  const b64 = (bytes: number) => randomBytes(bytes).toString('base64');

  it('reads id:base64 entries separated by commas or lines, comments skipped', () => {
    const keys = parseKeys(`# current first\nnew:${b64(32)}\nold:${b64(32)}, older:${b64(32)}`, 'file');
    expect(keys.map((k) => k.id)).toEqual(['new', 'old', 'older']);
  });

  it('says what is wrong with each bad entry', () => {
    expect(() =>
      parseKeys(`a:${b64(16)},:${b64(32)},b:not base64!,a:${b64(32)},c:${b64(32)},c:${b64(32)}`, 'X'),
    ).toThrow(
      [
        'invalid configuration:',
        'X entry 1 ("a"): the key is 16 bytes; AES-256 needs 32',
        "X entry 2: must be id:base64key with an id of letters, digits, '.', '_' or '-'",
        'X entry 3 ("b"): the key is not base64',
        'X entry 6 ("c"): the id is given twice',
      ].join('\n'),
    );
  });

  it('joins the variable and the file; none means no encryption', async () => {
    const file = path.join(await mkdtemp(path.join(tmpdir(), 'armada-keys-')), 'keys');
    await writeFile(file, `b:${b64(32)}\n`);
    expect(
      loadKeys({ ARMADA_ENCRYPTION_KEYS: `a:${b64(32)}`, ARMADA_ENCRYPTION_KEYS_FILE: file }).map(
        (k) => k.id,
      ),
    ).toEqual(['a', 'b']);
    expect(loadKeys({})).toEqual([]);
    expect(() => loadKeys({ ARMADA_ENCRYPTION_KEYS_FILE: `${file}-missing` })).toThrow(
      `ARMADA_ENCRYPTION_KEYS_FILE: cannot read ${file}-missing (ENOENT)`,
    );
  });
});
