import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { codecServerSettings, startCodecServer } from '../../worker/codec-server';

const KEYS = { ARMADA_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}` };
const REFUSAL = /ARMADA_CODEC_HOST is .*, not a loopback address: set ARMADA_CODEC_TOKEN too/;

describe('codecServerSettings', () => {
  it('listens on 127.0.0.1:8888 without a token unless told otherwise', () => {
    expect(codecServerSettings({})).toEqual({
      host: '127.0.0.1',
      port: 8888,
      token: undefined,
      corsOrigin: 'http://localhost:8233',
    });
  });

  it.each(['127.0.0.1', '127.1.2.3', '::1', '[::1]', '::ffff:127.0.0.1', 'localhost'])(
    'takes the loopback address %s without a token',
    (host) => {
      expect(codecServerSettings({ ARMADA_CODEC_HOST: host }).host).toBe(host);
    },
  );

  it.each(['0.0.0.0', '::', '10.0.0.5', 'codec.example.com', '::ffff:10.0.0.5', '128.0.0.1'])(
    'refuses %s without ARMADA_CODEC_TOKEN, naming both variables',
    (host) => {
      expect(() => codecServerSettings({ ARMADA_CODEC_HOST: host })).toThrow(REFUSAL);
    },
  );

  it('takes any address with a token', () => {
    expect(codecServerSettings({ ARMADA_CODEC_HOST: '0.0.0.0', ARMADA_CODEC_TOKEN: 't' })).toMatchObject({
      host: '0.0.0.0',
      token: 't',
    });
  });

  it('refuses a port that is not a port number', () => {
    expect(() => codecServerSettings({ ARMADA_CODEC_PORT: '70000' })).toThrow(
      'ARMADA_CODEC_PORT must be a port number, not "70000"',
    );
  });
});

describe('startCodecServer', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    server = undefined;
  });

  it('listens on 127.0.0.1 by default', async () => {
    server = await startCodecServer({ ...KEYS, ARMADA_CODEC_PORT: '0' });
    expect((server.address() as AddressInfo).address).toBe('127.0.0.1');
  });

  it('does not start on every address without a token', async () => {
    await expect(
      startCodecServer({ ...KEYS, ARMADA_CODEC_PORT: '0', ARMADA_CODEC_HOST: '0.0.0.0' }),
    ).rejects.toThrow(REFUSAL);
  });

  it('starts on every address with a token, and asks callers for it', async () => {
    server = await startCodecServer({
      ...KEYS,
      ARMADA_CODEC_PORT: '0',
      ARMADA_CODEC_HOST: '0.0.0.0',
      ARMADA_CODEC_TOKEN: 'secret',
    });
    const { address, port } = server.address() as AddressInfo;
    expect(address).toBe('0.0.0.0');
    const response = await fetch(`http://127.0.0.1:${port}/decode`, {
      method: 'POST',
      body: '{"payloads":[]}',
    });
    expect(response.status).toBe(401);
  });
});
