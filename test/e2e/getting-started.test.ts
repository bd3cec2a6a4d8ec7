import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { uniqueName } from '../helpers/env';
import { dropFinalizers, kubectl } from '../helpers/kube';
import { eventually } from '../helpers/processes';
import { groupRuns, killGroup, Terminal, type Pasted } from '../helpers/terminal';
import { outputMatches, tutorialSteps, type TutorialStep } from '../helpers/tutorial-steps';

/**
 * docs/tutorials/getting-started.md, run as a reader runs it (issue 36, "docs that cannot rot"):
 * its ```sh blocks in order, each pasted into a terminal, each checked against the ```text block
 * that says what it shows (conventions: test/helpers/tutorial-steps.ts; `[...]` stands for what
 * differs from run to run, ```text eventually for a read-only step the reader runs again until
 * it shows that). Real everything: `npm start` (deploy/start.sh) runs the product's worker and
 * bridge from dist/, kubectl, helm and armadactl are the ones the reader runs.
 *
 * Two terminals, as the tutorial has them:
 * - the first runs the first block, which must be exactly `npm start`, in the background (its own
 *   process group); the step passes once what it printed matches its text block (the banner),
 *   and it ends with the tutorial's last words: Ctrl-C (SIGINT to the group), `stopping...`,
 *   and no process of the group left;
 * - the second is one bash for every other block, so the tutorial's `export`s hold from block to
 *   block. Its PATH has no .tools/bin: the tutorial's own `export PATH` must put helm and kubectl
 *   there.
 *
 * What differs from a reader's machine, and why; nothing else is changed:
 * - `npm start` attaches to the suite's sandbox cluster and Temporal dev server instead of
 *   starting its own, as it does when the kubeconfig answers and TEMPORAL_ADDRESS is set (so it
 *   never takes port 7233 or .sandbox/, which a reader's own npm start uses). So the tutorial's
 *   one line `export KUBECONFIG=$PWD/.sandbox/kubeconfig` (asserted to be there, once) is run
 *   with the suite's kubeconfig instead, and the banner's UI line names the suite's server.
 * - The examples are applied unedited, in the namespace `default`, deploying into `demo`, `shop`
 *   and `web`, with their own ArmadaPolicy `examples`: no other test file uses those namespaces
 *   or those objects' workflow IDs (they rewrite the examples' namespaces: armadactl-authz,
 *   the Temporal restart drill, the in-cluster lane). But other files' objects sit in other
 *   namespaces of the same sandbox, so npm start's bridge watches `default` alone
 *   (ARMADA_NAMESPACES) and takes a leader Lease of its own name there (ARMADA_LEASE_NAME), its
 *   worker polls a task queue of this file's (ARMADA_TASK_QUEUE, which the second terminal has
 *   too), and both serve metrics on free ports (ARMADA_METRICS_PORT=0).
 * - Both terminals are pipes, not TTYs. The tutorial's outputs hold for both: where a command
 *   draws differently on a terminal (armadactl watch), the text block shows what both print.
 * - Neither terminal has the suite's product variables (ARMADA_KUBECONFIG and the like): the
 *   reader runs as the sandbox's admin, as npm start's sandbox makes them.
 * - The Temporal UI is described, not driven: test/e2e/temporal-ui.test.ts opens it in Chromium.
 *
 * Waits poll for what the tutorial promises (a ```text eventually step is run again until its
 * output matches); nothing sleeps. After the run, the examples' objects, their policy and their
 * release namespaces are removed, also when a step failed half way.
 */

const repo = path.resolve(__dirname, '../..');
const TUTORIAL = 'docs/tutorials/getting-started.md';
const SANDBOX_KUBECONFIG_LINE = 'export KUBECONFIG=$PWD/.sandbox/kubeconfig';
/** A step that runs once (kubectl apply, armadactl watch of a whole manifest on a loaded machine). */
const STEP_MS = 90_000;
/** A first start builds nothing here (the global setup built dist/, test/run.sh the tools). */
const START_MS = 120_000;

const steps = tutorialSteps(readFileSync(path.join(repo, TUTORIAL), 'utf8'));
const [start, ...pasted] = steps;

/** The step's first line, for the test's name. */
const title = (step: TutorialStep) => `line ${step.line}: ${step.commands.split('\n')[0]}`;

function mismatch(step: TutorialStep, output: string, failed: number): Error {
  return new Error(
    `${TUTORIAL} line ${step.line}:\n${step.commands}\n` +
      `printed${failed ? ` (${failed} command(s) failed)` : ''}:\n${output}\n` +
      `but the tutorial (line ${step.expected?.line}) says it shows:\n${step.expected?.text}`,
  );
}

describe(`${TUTORIAL}, pasted into two terminals as a reader would (sandbox cluster, Temporal dev server, npm start)`, () => {
  const suiteKubeconfig = process.env.KUBECONFIG;
  const temporalAddress = process.env.TEMPORAL_ADDRESS;
  const taskQueue = uniqueName('tutorial');
  let product: ChildProcess | undefined;
  let productOutput = '';
  let terminal: Terminal | undefined;
  /** The first step that failed: every later step fails at once, naming it. */
  let failedAt: TutorialStep | undefined;

  /** The reader's environment: none of the suite's product variables, no .tools/bin on PATH. */
  function readerEnv(): NodeJS.ProcessEnv {
    const env = Object.fromEntries(
      Object.entries(process.env).filter(
        ([name]) => !name.startsWith('ARMADA_') || name === 'ARMADA_TEST_RUN',
      ),
    );
    const tools = path.join(repo, '.tools', 'bin');
    env.PATH = (env.PATH ?? '')
      .split(path.delimiter)
      .filter((dir) => path.resolve(dir) !== tools)
      .join(path.delimiter);
    delete env.KUBECONFIG;
    return { ...env, TEMPORAL_ADDRESS: temporalAddress, ARMADA_TASK_QUEUE: taskQueue };
  }

  /** Runs a step's test body, failing at once when an earlier step failed. */
  const step = (s: TutorialStep, body: () => Promise<void>) => async () => {
    if (failedAt) throw new Error(`not run: the step of line ${failedAt.line} failed`);
    try {
      await body();
    } catch (err) {
      failedAt = s;
      throw err;
    }
  };

  beforeAll(() => {
    if (!suiteKubeconfig || !temporalAddress)
      throw new Error('KUBECONFIG and TEMPORAL_ADDRESS are not set: run the suite with `npm test`');
  });

  afterAll(async () => {
    if (product && groupRuns(product)) killGroup(product, 'SIGKILL');
    await terminal?.close();
    // What a step that failed half way left: the examples' objects go without a bridge to
    // uninstall them, and their release namespaces with whatever is in them.
    const left = (await kubectl('get', '-f', 'examples/', '-o', 'name', '--ignore-not-found')).split('\n');
    for (const object of left.filter(Boolean)) await dropFinalizers(object, 'default');
    await kubectl(
      'delete',
      '-f',
      'examples/',
      '-f',
      'examples/policy/',
      '--ignore-not-found',
      '--wait=false',
    );
    await kubectl('delete', 'namespace', 'demo', 'shop', 'web', '--ignore-not-found', '--wait=false');
  }, 60_000);

  it('the tutorial starts with `npm start`, alone in its block, and has it nowhere else', () => {
    expect(start.commands).toBe('npm start');
    expect(pasted.filter((s) => s.commands.includes('npm start'))).toEqual([]);
    expect(
      steps.flatMap((s) => s.commands.split('\n')).filter((l) => l === SANDBOX_KUBECONFIG_LINE),
    ).toHaveLength(1);
  });

  it(
    `${title(start)} (first terminal, in the background): prints what the tutorial shows`,
    step(start, async () => {
      product = spawn('bash', ['-c', start.commands], {
        cwd: repo,
        env: {
          ...readerEnv(),
          KUBECONFIG: suiteKubeconfig,
          ARMADA_NAMESPACES: 'default',
          ARMADA_LEASE_NAME: taskQueue,
          ARMADA_METRICS_PORT: '0',
        },
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const keep = (chunk: Buffer) => (productOutput += chunk.toString());
      product.stdout!.on('data', keep);
      product.stderr!.on('data', keep);
      const expected = start.expected?.text ?? '';
      await eventually(
        `${TUTORIAL} line ${start.expected?.line}: what npm start prints`,
        async () => (outputMatches(expected, productOutput) ? true : undefined),
        { process: { child: product, output: () => productOutput }, timeoutMs: START_MS },
      );
    }),
    START_MS + 10_000,
  );

  it.each(pasted.map((s) => [title(s), s] as const))(
    '%s (second terminal): shows what the tutorial says',
    (_title, s) =>
      step(s, async () => {
        terminal ??= new Terminal(repo, readerEnv());
        const commands = s.commands
          .split('\n')
          .map((line) => (line === SANDBOX_KUBECONFIG_LINE ? `export KUBECONFIG=${suiteKubeconfig}` : line))
          .join('\n');
        const shows = ({ output, failed }: Pasted) =>
          failed === 0 && (s.expected === undefined || outputMatches(s.expected.text, output));
        if (s.expected?.eventually) {
          let last: Pasted = { output: '', failed: 0 };
          await eventually(
            `${TUTORIAL} line ${s.line} to show what line ${s.expected.line} says`,
            async () => {
              // A paste that never ended says so in the message, as its last output.
              last = await terminal!
                .paste(commands, STEP_MS)
                .catch((err: Error) => ({ output: err.message, failed: 1 }));
              return shows(last) ? true : undefined;
            },
            { timeoutMs: STEP_MS },
          ).catch(() => {
            throw mismatch(s, last.output, last.failed);
          });
          return;
        }
        const result = await terminal.paste(commands, STEP_MS);
        if (!shows(result)) throw mismatch(s, result.output, result.failed);
      })(),
    STEP_MS + 10_000,
  );

  it(
    'Ctrl-C in the first terminal: npm start prints `stopping...` and every process it started ends',
    step(start, async () => {
      if (!product) throw new Error('npm start never started');
      if (product.exitCode !== null || product.signalCode !== null)
        throw new Error(`npm start ended before Ctrl-C; it printed:\n${productOutput}`);
      const exited = once(product, 'exit');
      killGroup(product, 'SIGINT');
      await exited;
      expect(productOutput).toContain('stopping...');
      await eventually(
        'no process of the first terminal left',
        async () => (groupRuns(product!) ? undefined : true),
        {
          timeoutMs: 30_000,
        },
      );
    }),
    60_000,
  );
});
