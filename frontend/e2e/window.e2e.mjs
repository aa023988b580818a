// End to end, in a real browser engine against the real Go backend: the landing page's
// true empty state, the effective configuration on Settings, and config.toml changes
// arriving live through the core's events (no reload, no polling).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { openWindow, repoRoot, startApp, screenshot, stopApp } from './harness.mjs';

let app;
let browser;
let page;

before(async () => {
  app = await startApp();
  ({ browser, page } = await openWindow(app));
});

after(async () => {
  await screenshot(page, 'window');
  await browser?.close();
  await stopApp(app);
});

const modeCell = '[data-key="sandbox_mode"] [data-mode]';
const modeLayer = '[data-key="sandbox_mode"] [data-layer]';

test('the landing page says nothing is waiting', async () => {
  await page.getByRole('heading', { name: 'Nothing is waiting for you' }).waitFor({ timeout: 15_000 });
  assert.equal(await page.getByTestId('waiting-count').textContent(), '0');
  assert.match(await page.locator('main').textContent(), /Runs start without asking inside\s+~?\/.*Airlock/);
});

test('every page shows its true empty state', async () => {
  for (const [id, heading] of [
    ['dispatch', 'No tasks yet'],
    ['departments', 'No departments yet'],
    ['ops', 'No operation plans yet'],
    ['waiting', 'Nothing is waiting for you'],
  ]) {
    await page.locator(`nav a[data-page="${id}"]`).click();
    await page.getByRole('heading', { name: heading }).waitFor({ timeout: 10_000 });
    assert.equal(await page.locator('nav a[aria-current="page"]').getAttribute('data-page'), id);
    assert.equal(new URL(page.url()).hash, `#/${id}`);
  }
  // The footer says the core's sandbox indicator (the probes with the policy in force), nothing else.
  const st = await page.evaluate(() => window.go.desktop.Facade.SandboxStatus());
  const tones = { green: 'ok', amber: 'warn', red: 'danger' };
  await page.waitForFunction(
    ([words, tone]) => {
      const line = document.querySelector('[data-fact-line="sandbox"]');
      return line?.querySelector('[data-fact="sandbox"]')?.textContent === words && line.getAttribute('data-tone') === tone;
    },
    [st.indicator.words, tones[st.indicator.level]],
    { timeout: 10_000 },
  );
  assert.equal(await page.locator('[data-fact="dispatch"]').textContent(), 'on');
  assert.match(await page.locator('[data-fact="dispatch"]').locator('xpath=..').getAttribute('title'), /no task has a schedule/);
});

test('a request from an agent appears under Waiting for you live, and leaves when answered', async () => {
  await page.locator('nav a[data-page="waiting"]').click();
  const cwd = join(app.home, 'work');
  mkdirSync(cwd, { recursive: true });
  // An agent's tool call, as `airlock mcp` makes it: it waits for a person's answer.
  const waiting = app.api('POST', '/v1/permission/await', {
    id: 'e2e-write-1',
    tool: 'write_file',
    params: { path: join(cwd, 'notes.md'), content: 'hello' },
    context: { session: 'e2e-agent', cwd },
  });
  const row = page.locator('[data-approval="e2e-write-1"]');
  await row.waitFor({ timeout: 20_000 });
  assert.equal(await page.getByTestId('waiting-count').textContent(), '1');
  const text = await row.textContent();
  assert.match(text, /P1/);
  assert.match(text, /write_file/);
  assert.match(text, /agent session “e2e-agent”/);
  assert.match(await row.locator('[data-action="allow-once"]').textContent(), /Allow once/);

  const answered = await app.api('POST', '/v1/approvals/e2e-write-1/answer', { allow: false, reason: 'e2e says no', by: 'api' });
  assert.equal(answered.status, 200, JSON.stringify(answered.body));
  const decision = await waiting;
  assert.equal(decision.body.verdict, 'deny', JSON.stringify(decision.body));
  await row.waitFor({ state: 'detached', timeout: 20_000 });
  assert.equal(await page.getByTestId('waiting-count').textContent(), '0');
  await page.getByRole('heading', { name: 'Nothing is waiting for you' }).waitFor();
});

test('Settings shows the effective sandbox mode and the layer that set it', async () => {
  await page.locator('nav a[data-page="settings"]').click();
  await page.locator(modeCell).waitFor({ timeout: 15_000 });
  assert.equal(await page.locator(modeCell).textContent(), 'workspace-write');
  assert.equal(await page.locator(modeLayer).getAttribute('data-layer'), 'default');
  assert.equal(await page.locator(modeLayer).textContent().then((t) => t.trim()), 'default');
  await page.getByTestId('no-config-file').waitFor();
  // The Sandbox section shows this machine's probes, as the core found them.
  const st = await page.evaluate(() => window.go.desktop.Facade.SandboxStatus());
  const probes = page.getByTestId('sandbox-probes');
  for (const p of st.probes) {
    const chip = probes.locator(`li[data-probe="${p.name}"]`);
    await chip.waitFor({ timeout: 10_000 });
    assert.equal(await chip.getAttribute('data-ok'), String(p.ok), `probe ${p.name}`);
  }
});

test('a config.toml change shows up live, pushed by the core (nothing polls)', async () => {
  // Count every call the page makes to the Go façade from here on.
  await page.evaluate(() => {
    const facade = window.go.desktop.Facade;
    window.__facadeCalls = [];
    for (const name of Object.keys(facade)) {
      const real = facade[name];
      facade[name] = (...args) => {
        window.__facadeCalls.push(name);
        return real(...args);
      };
    }
  });
  await new Promise((r) => setTimeout(r, 2500));
  assert.deepEqual(await page.evaluate(() => window.__facadeCalls), [], 'the idle window called the core');

  app.writeConfig('sandbox_mode = "read-only"\n');
  await page.waitForFunction(
    ([cell, layer]) =>
      document.querySelector(cell)?.textContent === 'read-only' && document.querySelector(layer)?.getAttribute('data-layer') === 'file',
    [modeCell, modeLayer],
    { timeout: 20_000 },
  );
  assert.equal(await page.locator(modeLayer).textContent().then((t) => t.trim()), 'config.toml');
  assert.equal(await page.getByTestId('no-config-file').count(), 0);
  assert.ok((await page.evaluate(() => window.__facadeCalls)).includes('ConfigView'), 'the config.changed event made the page re-fetch the configuration');
});

test('a broken config.toml shows its line and column, and the last good values stay', async () => {
  app.writeConfig('sandbox_mode = "read-only"\napproval_policy = "sometimes"\n');
  const banner = page.getByTestId('config-error');
  await banner.waitFor({ timeout: 20_000 });
  const text = await banner.textContent();
  assert.match(text, /line 2, column \d+/);
  assert.match(text, /sometimes/);
  assert.equal(await page.locator(modeCell).textContent(), 'read-only');

  app.writeConfig('sandbox_mode = "read-only"\n');
  await banner.waitFor({ state: 'detached', timeout: 20_000 });
});

test('the footer pauses and resumes dispatch, and follows a pause made from the CLI', async () => {
  const fact = page.locator('[data-fact="dispatch"]');
  await fact.filter({ hasText: /^on/ }).waitFor({ timeout: 10_000 });
  await page.locator('footer button[data-action="pause"]').click();
  await fact.filter({ hasText: /^paused/ }).waitFor({ timeout: 10_000 });
  let st = await app.api('GET', '/v1/dispatch');
  assert.equal(st.body.paused, true, `the core should say paused: ${JSON.stringify(st.body)}`);
  assert.equal(st.body.paused_by, 'window');

  // Resumed from the CLI (the local API): the footer follows the dispatch.state event.
  st = await app.api('POST', '/v1/dispatch/resume');
  assert.equal(st.status, 200, JSON.stringify(st.body));
  await fact.filter({ hasText: /^on/ }).waitFor({ timeout: 10_000 });
  assert.equal(await page.locator('footer button[data-action="pause"]').count(), 1);
});
