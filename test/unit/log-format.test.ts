import { ApiException } from '@kubernetes/client-node';
import { loadConfig as loadBridgeConfig } from '../../bridge/config';
import { WAIT_REQUESTED_MS, watchFailureLevel } from '../../bridge/watch';
import { formatFor, jsonLine, logWriter, textLine, type LogRecord } from '../../runs/log-format';
import { loadConfig as loadWorkerConfig } from '../../worker/config';

/** 14:03:07.120 local time, whatever the machine's time zone. */
const time = new Date(2026, 10, 28, 14, 3, 7, 120);

const record = (fields: Record<string, unknown> = {}, level = 'warn'): LogRecord => ({
  time,
  level,
  component: 'bridge',
  message: 'could not acquire or renew the Lease',
  fields,
});

describe('textLine: one readable line per log entry', () => {
  it('writes the time of day, the level in capitals, the component, the message, then key=value', () => {
    expect(textLine(record({ lease: 'default/armada-bridge', attempt: 2 }))).toBe(
      '14:03:07.120 WARN  bridge could not acquire or renew the Lease lease=default/armada-bridge attempt=2',
    );
  });

  it('quotes strings with spaces, quotes or =, writes other values as JSON, and leaves out undefined', () => {
    expect(
      textLine(
        record(
          {
            error: 'HTTP 429: storage is (re)initializing',
            empty: '',
            quoted: 'a"b',
            pair: 'a=b',
            namespaces: ['demo', 'ops'],
            ok: true,
            missing: undefined,
          },
          'info',
        ),
      ),
    ).toBe(
      '14:03:07.120 INFO  bridge could not acquire or renew the Lease error="HTTP 429: storage is (re)initializing" ' +
        'empty="" quoted="a\\"b" pair="a=b" namespaces=["demo","ops"] ok=true',
    );
  });
});

describe('jsonLine', () => {
  it('writes time (UTC), level, component and message first, then the fields', () => {
    expect(JSON.parse(jsonLine(record({ attempt: 2 })))).toEqual({
      time: time.toISOString(),
      level: 'warn',
      component: 'bridge',
      message: 'could not acquire or renew the Lease',
      attempt: 2,
    });
    expect(jsonLine(record()).startsWith('{"time":')).toBe(true);
  });
});

describe('ARMADA_LOG_FORMAT', () => {
  it('is text on a terminal and JSON elsewhere when unset; as set otherwise', () => {
    expect(formatFor(undefined, true)).toBe('text');
    expect(formatFor(undefined, false)).toBe('json');
    expect(formatFor('json', true)).toBe('json');
    expect(formatFor('text', false)).toBe('text');
  });

  it('is read by the worker and the bridge, empty as unset, and a bad value is refused by name', () => {
    for (const load of [loadWorkerConfig, loadBridgeConfig]) {
      expect(load({ ARMADA_LOG_FORMAT: 'json' }).ARMADA_LOG_FORMAT).toBe('json');
      expect(load({ ARMADA_LOG_FORMAT: '' }).ARMADA_LOG_FORMAT).toBeUndefined();
      expect(() => load({ ARMADA_LOG_FORMAT: 'pretty' })).toThrow(
        'ARMADA_LOG_FORMAT: must be one of json, text, not "pretty"',
      );
    }
  });
});

describe('logWriter', () => {
  const stream = (isTTY: boolean) => {
    const lines: string[] = [];
    return { lines, isTTY, write: (line: string) => lines.push(line) > 0 };
  };

  it('writes info to stdout and warnings to stderr, text to a terminal and JSON to a pipe or file', () => {
    const terminal = stream(true);
    const file = stream(false);
    const write = logWriter(undefined, terminal, file);
    write(record({ attempt: 1 }, 'info'));
    write(record({ attempt: 2 }, 'warn'));
    expect(terminal.lines).toEqual([
      '14:03:07.120 INFO  bridge could not acquire or renew the Lease attempt=1\n',
    ]);
    expect(file.lines).toHaveLength(1);
    expect(JSON.parse(file.lines[0])).toMatchObject({ level: 'warn', attempt: 2 });
  });

  it('writes JSON to a terminal too when ARMADA_LOG_FORMAT=json', () => {
    const terminal = stream(true);
    logWriter('json', terminal, terminal)(record({}, 'info'));
    expect(JSON.parse(terminal.lines[0])).toMatchObject({ level: 'info', component: 'bridge' });
  });
});

describe('watchFailureLevel: a warming-up API server is no error', () => {
  const warmingUp = new ApiException(
    429,
    'HTTP-Code: 429',
    JSON.stringify({ kind: 'Status', code: 429, message: 'storage is (re)initializing' }),
    {},
  );
  // What client-node's Watch rejects with when the watch request itself is answered 429.
  const watchAnswered429 = Object.assign(new Error('Too Many Requests'), { statusCode: 429 });

  it('logs HTTP 429 at info while it lasts less than WAIT_REQUESTED_MS', () => {
    expect(watchFailureLevel(warmingUp, 0)).toBe('info');
    expect(watchFailureLevel(warmingUp, WAIT_REQUESTED_MS - 1)).toBe('info');
    expect(watchFailureLevel(watchAnswered429, 5_000)).toBe('info');
  });

  it('logs HTTP 429 that persists, and every other failure, at error', () => {
    expect(watchFailureLevel(warmingUp, WAIT_REQUESTED_MS)).toBe('error');
    expect(watchFailureLevel(new ApiException(403, 'HTTP-Code: 403', '{}', {}), 0)).toBe('error');
    expect(watchFailureLevel(Object.assign(new Error('Service Unavailable'), { statusCode: 503 }), 0)).toBe(
      'error',
    );
    expect(watchFailureLevel(new Error('connect ECONNREFUSED 127.0.0.1:6443'), 0)).toBe('error');
  });
});
