// End to end, in a real browser engine against the real Go backend: a run fails while
// Airlock runs; Airlock is quit and started again; the window's Waiting for you shows the
// digest of that failure as a card, whose link opens the failed runs; dismissing it is
// remembered by the core, so a reload does not bring it back.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openWindow, startApp, screenshot, stopApp } from './harness.mjs';

let app;
let browser;
let page;
let work; // the workspace root, under /var/tmp (the sandbox gives runs a private /tmp)

async function until(what, timeoutMs, ok) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await ok()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

before(async () => {
  work = mkdtempSync('/var/tmp/airlock-e2e-digest-');
  const tmp = mkdtempSync(join(tmpdir(), 'airlock-e2e-'));
  mkdirSync(join(tmp, 'home', 'config'), { recursive: true });
  writeFileSync(join(tmp, 'home', 'config', 'config.toml'), `[workspace]\nroots = [${JSON.stringify(work)}]\n`);

  // The previous start of Airlock: a run fails, nobody looks, Airlock is quit.
  const first = await startApp({ tmp });
  try {
    const created = await first.api('POST', '/v1/tasks', { name: 'nightly', argv: ['sh', '-c', 'echo broken >&2; exit 3'], cwd: work });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const run = await first.api('POST', '/v1/tasks/nightly/run-now');
    assert.equal(run.status, 200, JSON.stringify(run.body));
    await until('the run to fail', 60_000, async () => (await first.api('GET', `/v1/runs/${run.body.id}`)).body.status === 'failed');
  } finally {
    await stopApp(first, { keep: true });
  }
  app = await startApp({ tmp });
  ({ browser, page } = await openWindow(app, { heading: 'Nothing is waiting for you' }));
});

after(async () => {
  await screenshot(page, 'digest', { fullPage: true });
  await browser?.close();
  await stopApp(app);
  if (work) rmSync(work, { recursive: true, force: true });
});

test('the digest of a failure while nobody watched is a card on Waiting for you, until dismissed', async () => {
  const card = page.locator('[data-digest]');
  await card.waitFor({ timeout: 15_000 });
  assert.match(await card.textContent(), /While Airlock was not watching/);
  assert.match(await card.locator('[data-line="failed"]').textContent(), /1 run failed or was interrupted/);
  await screenshot(page, 'digest-card', { fullPage: true });

  // Its link opens the failed runs, where the run is listed.
  await card.locator('[data-open="failed"]').click();
  const row = page.locator('[data-run-row]').first();
  await row.waitFor({ timeout: 10_000 });
  assert.match(await row.textContent(), /nightly[\s\S]*exit 3/);
  assert.equal(await page.locator('[data-run-row]').count(), 1);
  assert.match(page.url(), /#\/dispatch\/runs\?status=failed$/);

  await page.evaluate(() => (location.hash = '#/waiting'));
  await page.locator('[data-action="dismiss-digest"]').click();
  await page.locator('[data-digest]').waitFor({ state: 'detached', timeout: 10_000 });
  const left = await app.api('GET', '/v1/digest');
  assert.equal(left.body.id, 0, 'the core still shows the dismissed digest');
  await page.reload();
  await page.getByRole('heading', { name: 'Nothing is waiting for you' }).waitFor({ timeout: 15_000 });
  // A round trip over the same bridge after the page's own read of the digest on load.
  assert.equal((await page.evaluate(() => window.go.desktop.Facade.Digest())).id, 0);
  assert.equal(await page.locator('[data-digest]').count(), 0, 'a reload brought the dismissed card back');
});
