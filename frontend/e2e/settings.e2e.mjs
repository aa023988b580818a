// End to end, in a real browser engine against the real Go backend: the Settings tabs.
// The Sandbox tab shows this machine's probes; changing the network and the mode in the
// window rewrites config.toml with the person's comments kept, and the effective value
// and its layer update live (through config.changed, nothing polls); an edit of the file
// from outside shows up the same way; revoking a grant in the Permissions tab removes it
// for the CLI too.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { openWindow, repoRoot, startApp, screenshot, stopApp, confirmConfig } from './harness.mjs';

let app;
let browser;
let page;
let tools;
let cli;

before(async () => {
  // The CLI, to check that it agrees with the window (CGO off: it links no WebKit, no SQLite).
  tools = mkdtempSync('/var/tmp/airlock-e2e-settings-');
  cli = join(tools, 'airlock');
  execFileSync('go', ['build', '-o', cli, './cmd/airlock'], { cwd: repoRoot, env: { ...process.env, CGO_ENABLED: '0' }, stdio: 'inherit' });
  app = await startApp();
  ({ browser, page } = await openWindow(app, { heading: 'Nothing is waiting for you' }));
});

after(async () => {
  await screenshot(page, 'settings', { fullPage: true });
  await browser?.close();
  if (tools) rmSync(tools, { recursive: true, force: true });
  await stopApp(app);
});

/** shot keeps a picture of the current tab for the review (artifacts/e2e-settings-<name>.png). */
async function shot(name) {
  await screenshot(page, `settings-${name}`);
}

const row = (key) => page.locator(`[data-key="${key}"]`);
const network = 'sandbox_workspace_write.network_access';

/** waitRow waits until a row's layer and a predicate on the row hold. */
async function waitRow(key, layer, predicate, arg) {
  await page.waitForFunction(
    ([key, layer, predicate, arg]) => {
      const el = document.querySelector(`[data-key="${key}"]`);
      if (!el || el.querySelector('[data-layer]')?.getAttribute('data-layer') !== layer) return false;
      return new Function('el', 'arg', `return (${predicate})(el, arg)`)(el, arg);
    },
    [key, layer, predicate.toString(), arg],
    { timeout: 20_000 },
  );
}

// network_access is one of three choices: off, allowlist, on.
// (data-value: a radio's value "on" is its default, which the DOM leaves unwritten.)
const networkIs = (el, n) => el.querySelector(`input[data-value="${n}"]`)?.checked === true;
const modeIs = (el, mode) => el.querySelector(`input[value="${mode}"]`)?.checked === true;

const personal = `# My Airlock — written by hand, keep these comments
sandbox_mode = "workspace-write"   # the safe default

[sandbox_workspace_write]
# the package mirror needs it now and then
network_access = false
`;

test('the Sandbox tab shows this machine’s probes, and the micro-VM modes wait for the runtime', async () => {
  await page.locator('nav a[data-page="settings"]').click();
  await page.locator('a[data-tab="sandbox"]').click();
  assert.equal(new URL(page.url()).hash, '#/settings/sandbox');
  await row('sandbox_mode').waitFor({ timeout: 15_000 });
  await page.waitForFunction(() => window.go.desktop.Facade.SandboxStatus().then(() => true, () => false), null, { timeout: 30_000 });
  const st = await page.evaluate(() => window.go.desktop.Facade.SandboxStatus());
  const probes = page.getByTestId('sandbox-probes');
  assert.ok(st.probes.length > 0, 'the core probed this machine');
  for (const p of st.probes) {
    const chip = probes.locator(`li[data-probe="${p.name}"]`);
    await chip.waitFor({ timeout: 10_000 });
    assert.equal(await chip.getAttribute('data-ok'), String(p.ok), `probe ${p.name}`);
  }
  assert.equal(await row('execution_mode').locator('input[value="sandbox"]').isDisabled(), true);
  assert.equal(await row('execution_mode').locator('input[value="auto"]').isDisabled(), true);
  assert.equal(await page.getByTestId('vm-state').textContent(), 'micro-VM: the micro-VM runtime is not installed');
  assert.match(await row('sandbox_mode').textContent(), /Reads are open everywhere but your credentials/);
  await shot('sandbox');
});

test('changing network and mode in the window rewrites config.toml with the comments kept, and the values update live', async () => {
  app.writeConfig(personal);
  await waitRow(network, 'file', networkIs, 'off');

  await row(network).locator('input[data-value="allowlist"]').click();
  await waitRow(network, 'file', networkIs, 'allowlist');
  assert.match(app.readConfig(), /^network_access = "allowlist"$/m);
  assert.match(await row(network).textContent(), /only the allowed domains, through Airlock's egress proxy/);

  await row(network).locator('input[data-value="on"]').click();
  await waitRow(network, 'file', networkIs, 'on');
  let text = app.readConfig();
  assert.match(text, /^network_access = true$/m);
  for (const c of ['# My Airlock — written by hand, keep these comments', '# the safe default', '# the package mirror needs it now and then']) {
    assert.ok(text.includes(c), `comment ${c} lost:\n${text}`);
  }
  assert.match(await row(network).textContent(), /Runs may use the network/);

  await row('sandbox_mode').locator('input[value="read-only"]').click();
  await waitRow('sandbox_mode', 'file', modeIs, 'read-only');
  text = app.readConfig();
  assert.match(text, /^sandbox_mode = "read-only"   # the safe default$/m);
  assert.match(await row('sandbox_mode').textContent(), /write nowhere/);

  // Back to the default: the line leaves the file, the layer says default.
  await row('sandbox_mode').locator('[data-action="reset"]').click();
  await waitRow('sandbox_mode', 'default', modeIs, 'workspace-write');
  assert.doesNotMatch(app.readConfig(), /sandbox_mode/);
  assert.ok(app.readConfig().includes('# My Airlock — written by hand'));
});

test('an edit of config.toml from outside shows up in the window, with the dangerous combination in words', async () => {
  app.writeConfig('sandbox_mode = "full-access"\napproval_policy = "never"\n');
  // It loosens the answer path: the window says it waits, and the person confirms it.
  await page.getByTestId('config-pending').waitFor({ timeout: 20_000 });
  await confirmConfig(page);
  await waitRow('sandbox_mode', 'file', modeIs, 'full-access');
  await waitRow(network, 'default', networkIs, 'off');
  const danger = page.locator('[data-danger="full-access-never"]');
  await danger.waitFor({ timeout: 10_000 });
  assert.match(await danger.textContent(), /full-access with approval policy never/);
  await shot('danger');
  await page.emulateMedia({ colorScheme: 'dark' });
  await shot('danger-dark');
  await page.emulateMedia({ colorScheme: 'light' });
  await page.locator('a[data-tab="approvals"]').click();
  await row('approval_policy').waitFor({ timeout: 10_000 });
  assert.equal(await page.locator('[data-danger="full-access-never"]').count(), 1, 'the Approvals tab warns too');
  await shot('approvals');
  await page.locator('a[data-tab="hooks"]').click();
  await page.locator('[data-agent="Claude Code"][data-kind="hook"]').waitFor({ timeout: 10_000 });
  // What the tab says is what the core found in this user's agent settings.
  const hooks = await page.evaluate(() => window.go.desktop.Facade.HooksView());
  for (const a of hooks.agents) {
    assert.equal(await page.locator(`[data-agent="${a.agent}"][data-kind="${a.kind}"]`).getAttribute('data-installed'), String(a.installed), `${a.agent} ${a.kind}`);
  }
  await shot('hooks');
  await page.locator('a[data-tab="sandbox"]').click();

  app.writeConfig(personal);
  await waitRow('sandbox_mode', 'file', modeIs, 'workspace-write');
  await danger.waitFor({ state: 'detached', timeout: 10_000 });
});

test('revoking a grant in the Permissions tab removes it, and the CLI agrees', async () => {
  const cwd = join(app.home, 'work');
  mkdirSync(cwd, { recursive: true });
  const request = (id) => app.api('POST', '/v1/permission/await', { id, tool: 'write_file', params: { path: join(cwd, 'notes.md'), content: 'x' }, context: { cwd } });
  const first = request('e2e-settings-grant');
  const popup = page.locator('[role="alertdialog"][data-request="e2e-settings-grant"]');
  await popup.waitFor({ timeout: 20_000 });
  await popup.locator('[data-action="allow-always"]').click();
  await popup.locator('[data-scope="always"]').click();
  assert.equal((await first).body.verdict, 'allow');

  await page.locator('a[data-tab="permissions"]').click();
  const grant = page.locator('[data-grant]').filter({ hasText: 'write_file' });
  await grant.waitFor({ timeout: 15_000 });
  await shot('permissions');
  const id = await grant.getAttribute('data-grant');
  const env = { ...process.env, AIRLOCK_HOME: app.home };
  const listed = JSON.parse(execFileSync(cli, ['grants', 'list', '--json'], { env, encoding: 'utf8' }));
  assert.deepEqual(listed.map((g) => g.id), [id]);

  await grant.locator('[data-action="revoke"]').click();
  await page.locator(`[data-grant="${id}"]`).waitFor({ state: 'detached', timeout: 10_000 });
  await page.getByTestId('no-grants').waitFor();
  assert.deepEqual(JSON.parse(execFileSync(cli, ['grants', 'list', '--json'], { env, encoding: 'utf8' })), []);

  // The next identical request asks again.
  const again = request('e2e-settings-again');
  await page.locator('[role="alertdialog"][data-request="e2e-settings-again"]').waitFor({ timeout: 20_000 });
  const denied = await app.api('POST', '/v1/approvals/e2e-settings-again/answer', { allow: false, by: 'api' });
  assert.equal(denied.status, 200);
  assert.equal((await again).body.verdict, 'deny');

  // Revoked from the CLI (the local API): the tab follows the grants.changed event.
  const third = request('e2e-settings-third');
  const popup3 = page.locator('[role="alertdialog"][data-request="e2e-settings-third"]');
  await popup3.waitFor({ timeout: 20_000 });
  await popup3.locator('[data-action="allow-always"]').click();
  await popup3.locator('[data-scope="always"]').click();
  assert.equal((await third).body.verdict, 'allow');
  const row = page.locator('[data-grant]').filter({ hasText: 'write_file' });
  await row.waitFor({ timeout: 15_000 });
  const id3 = await row.getAttribute('data-grant');
  const revoked = await app.api('DELETE', `/v1/grants/${id3}`);
  assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
  await page.locator(`[data-grant="${id3}"]`).waitFor({ state: 'detached', timeout: 10_000 });
});

test('a tier changed in the Permissions tab is written to config.toml next to the person’s text', async () => {
  const bash = page.locator('tr[data-tool="web_fetch"]');
  await bash.locator('select').selectOption('P2');
  await page.waitForFunction(() => document.querySelector('tr[data-tool="web_fetch"] [data-from]')?.getAttribute('data-from') === 'file', null, { timeout: 15_000 });
  const text = app.readConfig();
  assert.match(text, /\[permission\.tiers\]\nweb_fetch = "P2"\n/);
  assert.ok(text.includes('# the package mirror needs it now and then'));
});

test('a workspace root added in the General tab is written to config.toml and shown with its layer', async () => {
  await page.locator('a[data-tab="general"]').click();
  const list = page.locator('[data-list="workspace roots"]');
  await list.waitFor({ timeout: 10_000 });
  assert.match(await list.textContent(), /without asking you/);
  await list.locator('input').fill('relative/dir');
  await list.locator('button[type="submit"]').click();
  await list.locator('[role="alert"]').waitFor();
  await list.locator('input').fill('~/code');
  await list.locator('button[type="submit"]').click();
  await page.waitForFunction(
    () => document.querySelector('[data-key="workspace.roots"] [data-layer]')?.getAttribute('data-layer') === 'file',
    null,
    { timeout: 15_000 },
  );
  const text = app.readConfig();
  assert.match(text, /\[workspace\]\nroots = \["~\/Airlock", "~\/code"\]\n/);
  assert.ok(text.includes('# My Airlock — written by hand'));
  await shot('general');
});
