// End to end, in a real browser engine against the real Go backend and a real sandbox:
// the allowlist. Settings → Sandbox chooses network "allowlist", adds an allowed and a
// denied domain and allows local destinations (the test's server is on this machine's
// loopback), each written to config.toml. A scheduled run then curls, inside bubblewrap
// and through the core's egress proxy, the allowed domain, the denied one and an unknown
// one: the unknown one waits as a P1 popup in the window, Allow lets it through, the run
// completes, and the run view's network summary shows every domain, the refused one
// marked.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:http';
import { execFileSync } from 'node:child_process';
import { openWindow, startApp, screenshot, stopApp } from './harness.mjs';

let app;
let browser;
let page;
let work; // under /var/tmp: the sandbox gives runs a private /tmp
let server;
let port;
const hits = [];

const hasTools = (() => {
  try {
    execFileSync('sh', ['-c', 'command -v curl && test -x /usr/bin/bwrap'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

before(async () => {
  if (!hasTools) return;
  server = createServer((req, res) => {
    hits.push(`${req.headers.host} ${req.url}`);
    res.end(`reached ${req.url}\n`);
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  port = server.address().port;
  work = mkdtempSync('/var/tmp/airlock-e2e-network-');
  // The run's directory is a workspace root, so the run starts without a question about
  // it: written before the first start (a root added later waits for the person).
  const tmp = mkdtempSync(join(tmpdir(), 'airlock-e2e-'));
  mkdirSync(join(tmp, 'home', 'config'), { recursive: true });
  writeFileSync(join(tmp, 'home', 'config', 'config.toml'), `# written by the test: keep this\n[workspace]\nroots = ["${work}"]\n`);
  app = await startApp({ tmp });
  const deadline = Date.now() + 20_000;
  for (;;) {
    const cfg = await app.api('GET', '/v1/config');
    if (JSON.stringify(cfg.body).includes(work)) break;
    if (Date.now() > deadline) throw new Error(`the core never read the workspace root: ${JSON.stringify(cfg.body)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  ({ browser, page } = await openWindow(app, { heading: 'Nothing is waiting for you' }));
});

after(async () => {
  await screenshot(page, 'network', { fullPage: true });
  await browser?.close();
  await stopApp(app);
  server?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

const row = (key) => page.locator(`[data-key="${key}"]`);

async function go(hash) {
  await page.evaluate((h) => (location.hash = h), hash);
}

/** configSays waits until config.toml matches re. */
async function configSays(re) {
  const deadline = Date.now() + 20_000;
  while (!re.test(app.readConfig())) {
    if (Date.now() > deadline) assert.fail(`config.toml never matched ${re}:\n${app.readConfig()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function addTo(list, item) {
  const l = page.locator(`[data-list="${list}"]`);
  await l.locator('input').fill(item);
  await l.locator('button[type="submit"]').click();
}

test('an allowlist chosen in the window: allowed, denied and asked domains, and the run view says where the run connected', { skip: !hasTools && 'needs curl and bubblewrap' }, async () => {
  // Settings → Sandbox.
  await go('#/settings/sandbox');
  await row('sandbox_workspace_write.network_access').waitFor({ timeout: 15_000 });
  await row('sandbox_workspace_write.network_access').locator('input[data-value="allowlist"]').click();
  await configSays(/^network_access = "allowlist"$/m);
  await addTo('allowed domains', 'localhost');
  await configSays(/^allowed_domains = \["localhost"\]$/m);
  await addTo('denied domains', 'denied.test');
  await configSays(/^denied_domains = \["denied\.test"\]$/m);
  assert.equal(await page.getByTestId('allow-local-warning').count(), 0);
  await row('network.allow_local').locator('[role="switch"]').click();
  await configSays(/^allow_local = true$/m);
  // Allowing local destinations looks dangerous, in words.
  await page.getByTestId('allow-local-warning').waitFor({ timeout: 10_000 });
  assert.match(await page.locator('[data-danger="allow-local"]').textContent(), /this machine's own services/);
  assert.match(await row('network.ask_unknown').textContent(), /waits as a P1 request/);
  assert.ok(app.readConfig().includes('# written by the test: keep this'), 'the edits lost the comment');
  await screenshot(page, 'network-settings', { fullPage: true });

  // A run that curls the allowed, the denied and an unknown domain through the proxy.
  const name = 'e2e-allowlist';
  const script = [
    `curl -sS --max-time 20 http://localhost:${port}/allowed`,
    'curl -sSf --max-time 20 http://denied.test/ || echo denied-refused',
    `curl -sS --max-time 120 http://127.0.0.1:${port}/unknown`,
  ].join('; ');
  const created = await app.api('POST', '/v1/tasks', { name, argv: ['sh', '-c', script], cwd: work, schedule: '', time_zone: 'UTC' });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const run = await app.api('POST', `/v1/tasks/${name}/run-now`, {});
  assert.equal(run.status, 200, JSON.stringify(run.body));
  const id = run.body.id;

  // The unknown destination is a P1 question in the window.
  const dialog = page.locator('[role="alertdialog"][data-tier="P1"]');
  await dialog.waitFor({ timeout: 60_000 });
  const asked = await dialog.textContent();
  assert.match(asked, /network_domain/);
  assert.match(asked, /127\.0\.0\.1/);
  assert.match(asked, /asks once/);
  await screenshot(page, 'network-popup');
  await dialog.locator('[data-action="allow-once"]').click();
  await dialog.waitFor({ state: 'detached', timeout: 10_000 });

  // The run completes; the run view shows where it connected.
  await go('#/dispatch');
  await page.locator('[data-tab="runs"]').click();
  const runRow = page.locator(`[data-run-row="${id}"]`);
  await runRow.waitFor({ timeout: 20_000 });
  await runRow.click();
  await page.waitForFunction(() => document.querySelector('.detail [data-status]')?.getAttribute('data-status') === 'succeeded', null, { timeout: 60_000 });
  const summary = page.getByTestId('run-network');
  for (const d of ['localhost', '127.0.0.1', 'denied.test']) await summary.locator(`tr[data-domain="${d}"]`).waitFor({ timeout: 20_000 });
  const allowed = summary.locator('tr[data-domain="localhost"]');
  assert.match(await allowed.locator('[data-verdicts]').textContent(), /^\s*1 allowed\s*$/);
  assert.match(await allowed.textContent(), new RegExp(String(port)));
  assert.equal(await allowed.getAttribute('class').then((c) => /\brefused\b/.test(c ?? '')), false);
  const unknown = summary.locator('tr[data-domain="127.0.0.1"]');
  assert.match(await unknown.locator('[data-verdicts]').textContent(), /1 allowed, asked you/);
  const denied = summary.locator('tr[data-domain="denied.test"]');
  assert.match(await denied.getAttribute('class'), /\brefused\b/);
  assert.match(await denied.locator('[data-verdicts]').textContent(), /1 refused/);
  assert.match(await denied.textContent(), /denied by denied_domains/);
  assert.equal(await summary.locator('[aria-label="refused"]').count(), 1);
  await screenshot(page, 'network-run', { fullPage: true });

  const log = await page.getByTestId('run-log').textContent();
  assert.match(log, /reached \/allowed/);
  assert.match(log, /reached \/unknown/);
  assert.match(log, /denied-refused/);
  assert.deepEqual(hits.map((h) => h.split(' ')[1]).sort(), ['/allowed', '/unknown'], 'the test server saw exactly the two allowed requests');
});
