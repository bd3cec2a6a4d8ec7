import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { steeringText, type Proof, type Signed } from '../core/plan/steering';
import { variable } from '../core/environment';

/**
 * The bridge's steering key (docs/explanation/security.md): it signs every pause, resume, approve,
 * promote and rollback the bridge forwards, and runs it starts carry its public key, so a run
 * tells the bridge's word (what the API server authenticated) from any other Temporal client's.
 */
export interface SteeringSigner {
  /** The public key as runs carry it: 32 bytes raw, hex. */
  publicKey: string;
  /** A proof of `req` for the run `workflowId` and `verb`, issued now. */
  prove(workflowId: string, verb: string, req: Signed): Proof;
}

/**
 * Where the bridge keeps the key it made itself when ARMADA_STEERING_KEY_FILE is unset: a
 * restarted bridge must find the same one, or it could no longer steer runs started before.
 */
export function defaultSteeringKeyFile(env: NodeJS.ProcessEnv = process.env): string {
  const state = variable(env, 'XDG_STATE_HOME') || join(homedir(), '.local', 'state');
  return join(state, 'armada-temporal', 'steering-key.pem');
}

/**
 * The signer of the Ed25519 key in `file` (PKCS8 PEM). A missing file is created with a new key
 * when `create` (the default location), else refused naming the file; so is a key of another type.
 */
export function loadSteeringKey(file: string, { create }: { create: boolean }): SteeringSigner {
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !create)
      throw new Error(`cannot read the steering key ${file}: ${(err as Error).message}`, { cause: err });
    const { privateKey } = generateKeyPairSync('ed25519');
    pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    // wx: two bridges starting at once keep the first one's key.
    try {
      writeFileSync(file, pem, { mode: 0o600, flag: 'wx' });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      pem = readFileSync(file, 'utf8');
    }
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch (err) {
    throw new Error(`the steering key ${file} is not a PKCS8 PEM private key: ${(err as Error).message}`, {
      cause: err,
    });
  }
  if (key.asymmetricKeyType !== 'ed25519')
    throw new Error(`the steering key ${file} is an ${key.asymmetricKeyType} key; it must be Ed25519`);
  const jwk = createPublicKey(key).export({ format: 'jwk' });
  const publicKey = Buffer.from(jwk.x!, 'base64url').toString('hex');
  return {
    publicKey,
    prove(workflowId, verb, req) {
      const at = new Date().toISOString();
      const sig = sign(null, Buffer.from(steeringText(workflowId, verb, req, at)), key).toString('hex');
      return { at, sig };
    },
  };
}

/** The bridge's signer: ARMADA_STEERING_KEY_FILE, else its own key in the default place (made once). */
export function steeringSignerFromEnv(env: NodeJS.ProcessEnv = process.env): SteeringSigner {
  const file = variable(env, 'ARMADA_STEERING_KEY_FILE');
  return file
    ? loadSteeringKey(file, { create: false })
    : loadSteeringKey(defaultSteeringKeyFile(env), { create: true });
}
