import { existsSync } from 'node:fs';
import path from 'node:path';
import { helmFailure } from '../../activities/helm/errors';
import { stillPendingMessage } from '../../activities/helm/recover';
import { DOC_PAGES, pointingTo } from '../../core/doc-pages';

describe('errors point into the docs', () => {
  it('names a page after the message, never a heading', () => {
    expect(pointingTo('spec.namespace: namespace boundary', DOC_PAGES.multiTenancy)).toBe(
      'spec.namespace: namespace boundary (see docs/how-to/multi-tenancy.md)',
    );
    for (const page of Object.values(DOC_PAGES)) {
      expect(page).toMatch(/^docs\/[a-z/-]+\.md$/);
      // A message naming a page that is not there points nowhere.
      expect([page, existsSync(path.join(__dirname, '../..', page))]).toEqual([page, true]);
    }
  });

  it('a release an interrupted helm left pending names the troubleshooting page', () => {
    expect(
      stillPendingMessage(
        { namespace: 'demo', release: 'web' },
        { status: 'pending-upgrade', revision: 3 },
        300,
      ),
    ).toBe(
      'release demo/web is pending-upgrade (revision 3): an interrupted helm may still be at work; looking again when its 300s are up (see docs/how-to/troubleshooting.md)',
    );
  });

  it("helm's refusal of a pending release names the troubleshooting page; its other failures name none", () => {
    const pending = helmFailure(
      ['upgrade', 'web', '--install'],
      1,
      'Error: UPGRADE FAILED: another operation (install/upgrade/rollback) is in progress\n',
    );
    expect(pending.message).toBe(
      'helm upgrade web failed (exit 1): Error: UPGRADE FAILED: another operation (install/upgrade/rollback) is in progress (see docs/how-to/troubleshooting.md)',
    );
    const timedOut = helmFailure(['upgrade', 'web'], 1, 'Error: UPGRADE FAILED: context deadline exceeded\n');
    expect(timedOut.message).toBe(
      'helm upgrade web failed (exit 1): Error: UPGRADE FAILED: context deadline exceeded',
    );
  });
});
