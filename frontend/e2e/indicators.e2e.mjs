// End to end, in a real browser engine against the real Go backend: the sandbox
// indicator. The footer's sandbox line turns red "not sandboxed" when config.toml sets
// full-access, with a banner saying why and the way out, and comes back when the file
// is put back (config.changed → sandbox.status; nothing polls). Started where bwrap is
// not in PATH, the window raises the start-up warning with the way out and the app's log
// says it too. A shell tool set to P0 in config.toml gets a red line in the Permissions tab.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { openWindow, startApp, screenshot, stopApp, confirmConfig } from './harness.mjs';

const line = '[data-fact-line="sandbox"]';

/** waitTone waits for the footer's sandbox line to have tone (ok, warn, danger) and returns its text. */
async function waitTone(page, tone) {
  await page.waitForFunction(([sel, tone]) => document.querySelector(sel)?.getAttribute('data-tone') === tone, [line, tone], { timeout: 20_000 });
  return page.locator(`${line} [data-fact="sandbox"]`).innerText();
}

test('the footer turns red under full-access and back', async () => {
  const app = await startApp();
  let browser;
  let page;
  try {
    app.writeConfig('sandbox_mode = "workspace-write"\n');
    ({ browser, page } = await openWindow(app, { heading: 'Nothing is waiting for you' }));
    await page.waitForFunction((sel) => ['ok', 'warn', 'danger'].includes(document.querySelector(sel)?.getAttribute('data-tone') ?? ''), line, { timeout: 20_000 });
    const before = await page.locator(line).getAttribute('data-tone');
    assert.notEqual(before, 'danger', 'workspace-write is sandboxed');

    app.writeConfig('sandbox_mode = "full-access"\n');
    await confirmConfig(page); // a loosening written by a file waits for the person
    assert.equal(await waitTone(page, 'danger'), 'not sandboxed');
    const banner = page.getByTestId('sandbox-banner');
    await banner.waitFor({ timeout: 10_000 });
    assert.equal(await banner.getAttribute('data-level'), 'red');
    const text = await banner.innerText();
    assert.match(text, /Commands are not sandboxed/);
    assert.match(text, /sandbox_mode is full-access/);
    assert.match(await page.getByTestId('sandbox-fix').innerText(), /sandbox_mode = "workspace-write"/);
    await screenshot(page, 'indicators-full-access');

    app.writeConfig('sandbox_mode = "workspace-write"\n');
    await waitTone(page, before);
    if (before === 'ok') await banner.waitFor({ state: 'detached', timeout: 10_000 });
  } finally {
    await browser?.close();
    await stopApp(app);
  }
});

test('the start-up warning is seen in the log and the window with bubblewrap made unavailable', async () => {
  // A PATH with every program of /usr/bin but bwrap (and slirp4netns).
  const bin = mkdtempSync('/var/tmp/airlock-e2e-nobwrap-');
  for (const name of readdirSync('/usr/bin')) {
    if (name !== 'bwrap' && name !== 'slirp4netns') symlinkSync(join('/usr/bin', name), join(bin, name));
  }
  const app = await startApp({ env: { PATH: `${bin}:/usr/sbin` } });
  let browser;
  let page;
  try {
    ({ browser, page } = await openWindow(app, { heading: 'Nothing is waiting for you' }));
    const banner = page.getByTestId('sandbox-banner');
    await banner.waitFor({ timeout: 20_000 });
    const text = await banner.innerText();
    assert.match(text, /bubblewrap is missing|no OS sandbox confines commands/, text);
    assert.match(await page.getByTestId('sandbox-fix').innerText(), /apt install bubblewrap/);
    assert.notEqual(await page.locator(line).getAttribute('data-tone'), 'ok');
    await screenshot(page, 'indicators-no-bwrap');
    const deadline = Date.now() + 20_000;
    while (!/(WARN|ERROR) sandbox: .*apt install bubblewrap/.test(app.log())) {
      assert.ok(Date.now() < deadline, `the app's log has no start-up warning about the sandbox:\n${app.log()}`);
      await new Promise((ok) => setTimeout(ok, 100));
    }
    // Hidden for the session by the person.
    await banner.getByRole('button', { name: 'Hide' }).click();
    await banner.waitFor({ state: 'detached', timeout: 5_000 });
  } finally {
    await browser?.close();
    await stopApp(app);
    rmSync(bin, { recursive: true, force: true });
  }
});

test('bash at P0 draws a red line in the Permissions tab, gone once the tier asks again', async () => {
  const app = await startApp();
  let browser;
  let page;
  try {
    app.writeConfig('[permission.tiers]\nbash = "P0"\n');
    ({ browser, page } = await openWindow(app, { hash: '#/settings/permissions' }));
    await confirmConfig(page); // a loosening written by a file waits for the person
    const warning = page.locator('[data-warning="bash"]');
    await warning.waitFor({ timeout: 20_000 });
    assert.match(await warning.innerText(), /bash is P0: every shell command it runs runs without asking you/);
    await screenshot(page, 'indicators-bash-p0');
    // The person sets it back to P1 in the window: the tier asks again, the line goes.
    await page.locator('tr[data-tool="bash"] select').selectOption('P1');
    await warning.waitFor({ state: 'detached', timeout: 15_000 });
    assert.match(app.readConfig(), /bash = "P1"/);
  } finally {
    await browser?.close();
    await stopApp(app);
  }
});
