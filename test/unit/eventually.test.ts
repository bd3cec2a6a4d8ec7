import { eventually, spawnCaptured } from '../helpers/processes';

describe('eventually, the suite’s wait for what a process or the cluster says', () => {
  it('returns the first value the check gives', async () => {
    let calls = 0;
    await expect(eventually('the third call', async () => (++calls === 3 ? calls : undefined))).resolves.toBe(
      3,
    );
  });

  it('ends when the process it waits on exits, showing what the process printed first', async () => {
    const crashing = spawnCaptured('sh', ['-c', 'echo "panic: bind: address already in use"; exit 2'], {});
    const started = Date.now();
    await expect(
      eventually('the server serving', async () => undefined, { process: crashing, timeoutMs: 60_000 }),
    ).rejects.toThrow(/the server serving: the process exited \(2\) first; it printed:\npanic: bind/);
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('times out with the process’s last lines', async () => {
    const quiet = spawnCaptured('sh', ['-c', 'echo waiting; exec sleep 30'], {});
    await quiet.printed('waiting');
    await expect(
      eventually('never', async () => undefined, { process: quiet, timeoutMs: 300 }),
    ).rejects.toThrow(/timed out waiting for never; the process's last lines:\nwaiting/);
    await quiet.stop('SIGKILL');
  });
});
