import { access, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import type * as activities from '../../activities';
import { manifestRun, startRun } from '../../runs/requests';
import type { deployRun } from '../../workflows/run/deploy-run';
import { approveSignal } from '../../workflows/messages';
import { demoDocuments } from '../workflows/demo-plan';
import { sharedWorker, uniqueName } from '../helpers/env';
import { eventually } from '../helpers/processes';
import { fakeHelm } from '../workflows/fake-helm';
import { renderDetails } from '../../workflows/details';
import { canaryAtStep2 } from '../helpers/canary-progress';

/**
 * The Temporal UI of the test run's dev server, in Debian's Chromium (headless, driven by
 * playwright-core; test/run.sh installs the `chromium` package when it is missing), shows a
 * manifest run held at an approval gate: found through its ArmadaName search attribute, with
 * its static summary and the current-details table of group and chart states.
 */

/** Debian's Chromium, unless ARMADA_CHROMIUM names another build. */
const CHROMIUM = process.env.ARMADA_CHROMIUM || '/usr/bin/chromium';
/** Git-ignored; the screenshot is saved whether the checks pass or not. */
const SCREENSHOTS = path.resolve(__dirname, '../../.test-artifacts/ui');
/** Generous: the UI is a single-page app served by the dev server on a busy 2-core machine. */
const UI_TIMEOUT_MS = 60_000;

const name = uniqueName('ui');
const releaseNamespace = uniqueName('ns');

/** "platform" (sequenced: a, b), then "apps" (parallel: c, d) behind an approval gate. */
const documents = () =>
  demoDocuments({
    name,
    prefix: 'ui',
    namespace: releaseNamespace,
    manifest: { approval: { before: ['apps'] } },
  });

/** The current-details table at the gate: platform deployed, apps waiting for approval. */
const atTheGate = [
  ['platform (sequenced, done)', 'a', `${releaseNamespace}/ui-a`, '1', 'deployed'],
  ['', 'b', `${releaseNamespace}/ui-b`, '1', 'deployed'],
  ['apps (parallel, waiting-approval)', 'c', `${releaseNamespace}/ui-c`, '', 'pending'],
  ['', 'd', `${releaseNamespace}/ui-d`, '', 'pending'],
];

// The run reports its phase through the status activity right after it set the current details,
// so the activity seeing WaitingApproval means the UI has the table of the gate to show.
let reachedGate: () => void = () => {};
const atGate = new Promise<void>((resolve) => (reachedGate = resolve));
const reportStatus: typeof activities.reportStatus = async (report) => {
  if (report.kind === 'ArmadaManifest' && report.event?.reason === 'WaitingApproval') reachedGate();
  return { onCluster: false, tookMs: 0 }; // no custom resources on a cluster in this test
};
const harness = sharedWorker({ activities: { ...fakeHelm().activities, reportStatus } });

/** The rendered-markdown frame of the innermost block holding both it and a heading of the page. */
function frameUnder(page: Page, heading: string) {
  return page
    .locator('div')
    .filter({ has: page.getByRole('heading', { name: heading, exact: true }) })
    .filter({ has: page.locator('iframe') })
    .last()
    .locator('iframe');
}

describe("the Temporal UI's markdown renderer (real dev server)", () => {
  it("shows a canary's step and replica splits as written, not typeset as fractions", async () => {
    // Issue 36.5: its typographer set `1/9` and `step 1/4` as <sup>1</sup>&frasl;<sub>9</sub>.
    const content = encodeURIComponent(renderDetails(canaryAtStep2));
    const html = await (
      await fetch(`${process.env.ARMADA_TEST_TEMPORAL_UI}/render?content=${content}`)
    ).text();
    expect(html).not.toMatch(/frasl|<sup>/);
    expect(html).toContain('step 2 / 3 at 30 %');
    expect(html).toMatch(/<td>1 \/ 9<\/td>/);
  });
});

describe('the Temporal UI during a manifest run (headless Chromium, real dev server)', () => {
  let browser: Browser | undefined;

  beforeAll(async () => {
    await access(CHROMIUM).catch(() => {
      throw new Error(
        `no Chromium at ${CHROMIUM}: \`npm test\` installs Debian's chromium package; or set ARMADA_CHROMIUM`,
      );
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('finds the run by its ArmadaName and shows its summary and the groups and charts in the current details', async () => {
    const { client, taskQueue } = harness();
    const workflowId = await startRun(client, taskQueue, manifestRun(documents()));
    try {
      await atGate;
      // The list page asks visibility once: open it when visibility has the run's attributes
      // (on a loaded machine it had not yet, and the list stayed empty).
      await eventually('the run listed by its ArmadaName', async () => {
        for await (const run of client.workflow.list({ query: `ArmadaName = "${name}"` }))
          if (run.workflowId === workflowId) return true;
        return undefined;
      });
      const page = await browser!.newPage({ viewport: { width: 1440, height: 1000 } });
      page.setDefaultTimeout(UI_TIMEOUT_MS);
      try {
        const query = encodeURIComponent(`ArmadaName = "${name}"`);
        await page.goto(`${process.env.ARMADA_TEST_TEMPORAL_UI}/namespaces/default/workflows?query=${query}`);
        await page.getByRole('link', { name: workflowId, exact: true }).click();
        await page.getByTestId('workflow-id-heading').getByText(workflowId).waitFor();
        await page.getByRole('tab', { name: 'User Metadata' }).click();

        const summary = frameUnder(page, 'Summary').contentFrame().locator('main');
        await summary.getByText(`ArmadaManifest default/${name}: 2 groups × 4 charts`).waitFor();

        const detailsFrame = frameUnder(page, 'Current Details');
        const details = detailsFrame.contentFrame();
        await details.getByText('WaitingApproval').waitFor();
        expect(await details.locator('main p').first().textContent()).toBe(
          'WaitingApproval — waiting on approve before group apps',
        );
        const rows = details.locator('tbody tr');
        await rows.nth(atTheGate.length - 1).waitFor();
        const cells = await Promise.all((await rows.all()).map((row) => row.locator('td').allTextContents()));
        expect(cells.map((row) => row.map((cell) => cell.trim()))).toEqual(atTheGate);
        // The UI sizes the frame about a line short of its page: the last row was cut (issue 36.5).
        const frame = (await detailsFrame.boundingBox())!;
        const lastRow = (await rows.last().boundingBox())!;
        expect(lastRow.y + lastRow.height).toBeLessThanOrEqual(frame.y + frame.height);
        await details.getByText('4 charts in 2 groups').waitFor();
      } finally {
        await mkdir(SCREENSHOTS, { recursive: true });
        await page.screenshot({
          path: path.join(SCREENSHOTS, 'manifest-current-details.png'),
          fullPage: true,
        });
        await page.close();
      }
    } finally {
      // Pass the gate, also after a failed check, so the run ends before the worker stops.
      const handle = client.workflow.getHandle<typeof deployRun>(workflowId);
      await handle.signal(approveSignal, { by: 'temporal-ui test' });
      expect((await handle.result()).state).toBe('deployed');
    }
  });
});
