import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { variable } from '../core/environment';

/** What an encrypted payload says it is; anything else passes through decode as it is. */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';
const IV_BYTES = 12;
const TAG_BYTES = 16;

const utf8 = (text: string) => new TextEncoder().encode(text);
const text = (bytes: Uint8Array | null | undefined) => new TextDecoder().decode(bytes ?? new Uint8Array());

export interface EncryptionKey {
  id: string;
  key: Buffer;
}

/**
 * AES-256-GCM over whole payloads (chart values, plans, results: everything a workflow's
 * history would otherwise show): the original payload, protobuf-encoded, is the plaintext, so its
 * own metadata (its encoding) is hidden too. Each payload has a random 12-byte IV, kept in front
 * of the ciphertext and the 16-byte tag; the key's id is in the payload's metadata.
 *
 * Rotation: the first key encrypts, every key decrypts by id. To rotate, put the new key first
 * and keep the old ones while histories written with them are still read.
 */
export class AesGcmCodec implements PayloadCodec {
  private readonly byId: Map<string, Buffer>;

  constructor(private readonly keys: readonly EncryptionKey[]) {
    if (keys.length === 0) throw new Error('an encryption codec needs at least one key');
    this.byId = new Map(keys.map((k) => [k.id, k.key]));
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    const { id, key } = this.keys[0];
    return payloads.map((payload) => {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const plaintext = temporal.api.common.v1.Payload.encode(payload).finish();
      const sealed = Buffer.concat([iv, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
      return {
        metadata: { encoding: utf8(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: utf8(id) },
        data: sealed,
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (text(payload.metadata?.encoding) !== ENCRYPTED_ENCODING) return payload;
      const id = text(payload.metadata?.[KEY_ID_METADATA]);
      const key = this.byId.get(id);
      if (!key)
        throw new Error(
          `payload encrypted with key "${id}", which is not configured (ARMADA_ENCRYPTION_KEYS has: ${[...this.byId.keys()].join(', ')})`,
        );
      const sealed = Buffer.from(payload.data ?? new Uint8Array());
      if (sealed.length < IV_BYTES + TAG_BYTES)
        throw new Error(`encrypted payload of key "${id}" is truncated`);
      const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      let plaintext: Buffer;
      try {
        plaintext = Buffer.concat([
          decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)),
          decipher.final(),
        ]);
      } catch {
        throw new Error(`encrypted payload of key "${id}" does not authenticate: altered, or another key`);
      }
      return temporal.api.common.v1.Payload.decode(plaintext) as Payload;
    });
  }
}

/**
 * Keys from `id:base64` entries, comma- or newline-separated (`#` starts a comment line in a
 * file). Throws one line per bad entry: no id, not base64, not 32 bytes, an id given twice.
 */
export function parseKeys(source: string, where: string): EncryptionKey[] {
  const problems: string[] = [];
  const keys: EncryptionKey[] = [];
  const entries = source
    .split(/[,\n]/)
    .map((e) => e.trim())
    .filter((e) => e && !e.startsWith('#'));
  for (const [i, entry] of entries.entries()) {
    const colon = entry.indexOf(':');
    const id = colon > 0 ? entry.slice(0, colon).trim() : '';
    const encoded = entry.slice(colon + 1).trim();
    const at = `${where} entry ${i + 1}${id ? ` ("${id}")` : ''}`;
    if (!id || !/^[\w.-]+$/.test(id)) {
      problems.push(`${at}: must be id:base64key with an id of letters, digits, '.', '_' or '-'`);
      continue;
    }
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) {
      problems.push(`${at}: the key is not base64`);
      continue;
    }
    const key = Buffer.from(encoded, 'base64');
    if (key.length !== 32) problems.push(`${at}: the key is ${key.length} bytes; AES-256 needs 32`);
    else if (keys.some((k) => k.id === id)) problems.push(`${at}: the id is given twice`);
    else keys.push({ id, key });
  }
  if (problems.length) throw new Error(`invalid configuration:\n${problems.join('\n')}`);
  return keys;
}

/**
 * The keys of `ARMADA_ENCRYPTION_KEYS`, then those of the file `ARMADA_ENCRYPTION_KEYS_FILE`
 * (a mounted Secret); none: no encryption.
 */
export function loadKeys(env: NodeJS.ProcessEnv = process.env): EncryptionKey[] {
  const fromVariable = variable(env, 'ARMADA_ENCRYPTION_KEYS');
  const keys = fromVariable ? parseKeys(fromVariable, 'ARMADA_ENCRYPTION_KEYS') : [];
  const file = variable(env, 'ARMADA_ENCRYPTION_KEYS_FILE');
  if (file) {
    let contents: string;
    try {
      contents = readFileSync(file, 'utf8');
    } catch (err) {
      throw new Error(
        `invalid configuration:\nARMADA_ENCRYPTION_KEYS_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code})`,
        { cause: err },
      );
    }
    for (const key of parseKeys(contents, 'ARMADA_ENCRYPTION_KEYS_FILE')) {
      if (keys.some((k) => k.id === key.id))
        throw new Error(
          `invalid configuration:\nARMADA_ENCRYPTION_KEYS_FILE: key "${key.id}" is also in ARMADA_ENCRYPTION_KEYS`,
        );
      keys.push(key);
    }
  }
  return keys;
}

/**
 * The data converter of the worker, the bridge and armadactl: payloads encrypted when keys are
 * configured, the SDK's default otherwise (undefined).
 */
export function loadDataConverter(env: NodeJS.ProcessEnv = process.env): DataConverter | undefined {
  return dataConverterFor(loadKeys(env));
}

export function dataConverterFor(keys: readonly EncryptionKey[]): DataConverter | undefined {
  return keys.length ? { payloadCodecs: [new AesGcmCodec(keys)] } : undefined;
}
