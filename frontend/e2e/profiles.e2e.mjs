// End to end, in a real browser engine against the real Go backend: the permission
// profile pickers. In Settings → General each shipped profile and preset is chosen in
// turn: config.toml gets profile = "NAME" with the person's comments kept, the core's
// effective values follow (with the profile as their layer), the dangerous one says what
// it gives up; None removes the line. The department and task editors choose theirs, and
// the core records them.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { openWindow, startApp, screenshot, stopApp } from './harness.mjs';

let app;
let browser;
let page;
let work;

before(async () => {
  app = await startApp();
  ({ browser, page } = await openWindow(app, { heading: 'Nothing is waiting for you' }));
  work = mkdtempSync('/var/tmp/airlock-e2e-profiles-');
});

after(async () => {
  await screenshot(page, 'profiles', { fullPage: true });
  await browser?.close();
  if (work) rmSync(work, { recursive: true, force: true });
  await stopApp(app);
});

async function go(hash) {
  await page.evaluate((h) => (location.hash = h), hash);
}

const mine = `# My Airlock — written by hand, keep these comments
[workspace]
roots = ["${'WORK'}"] # where my runs start

[reviewer]
# approve-for-me hands questions to this one
command = ["/bin/true"]
`;

/** effective is the core's value of key and the layer that set it (GET /v1/config, as the CLI reads it). */
async function effective(key) {
  const view = await app.api('GET', '/v1/config');
  assert.equal(view.status, 200, JSON.stringify(view.body));
  const s = view.body.settings.find((x) => x.key === key);
  return { value: s.value, layer: s.layer };
}

const shipped = [
  { name: 'ask', mode: 'workspace-write', approval: 'on-request', reviewer: 'user' },
  { name: 'approve-for-me', mode: 'workspace-write', approval: 'on-request', reviewer: 'auto_review' },
  { name: 'read-only', mode: 'read-only', approval: 'on-request', reviewer: 'user' },
  { name: 'full-access', mode: 'full-access', approval: 'never', warning: /nothing confines the agent and nothing asks you first/ },
  { name: 'personal' },
  { name: 'shared' },
  { name: 'beginner' },
  { name: 'demo' },
];

test('each profile and preset chosen in Settings rewrites config.toml with the comments kept, and the core follows', async () => {
  app.writeConfig(mine.replace('WORK', work));
  await go('#/settings/general');
  const picker = page.getByTestId('profile-picker');
  await picker.locator('[data-profile="demo"]').waitFor({ timeout: 15_000 });
  for (const p of shipped) {
    await picker.locator(`[data-profile="${p.name}"] input`).click();
    await page.waitForFunction((n) => document.querySelector('[data-testid="profile-picker"]')?.getAttribute('data-current') === n, p.name, { timeout: 20_000 });
    const text = app.readConfig();
    assert.match(text, new RegExp(`^profile = "${p.name}"$`, 'm'));
    for (const c of ['# My Airlock — written by hand, keep these comments', '# where my runs start', '# approve-for-me hands questions to this one']) {
      assert.ok(text.includes(c), `comment ${c} lost after choosing ${p.name}:\n${text}`);
    }
    assert.deepEqual(await effective('profile'), { value: p.name, layer: 'file' });
    if (p.mode) {
      assert.deepEqual(await effective('sandbox_mode'), { value: p.mode, layer: 'profile' }, p.name);
      assert.deepEqual(await effective('approval_policy'), { value: p.approval, layer: 'profile' }, p.name);
      // The General tab shows the profile as the value's layer.
      await page.waitForFunction(
        () => document.querySelector('[data-key="sandbox_mode"] [data-layer]')?.getAttribute('data-layer') === 'profile',
        null,
        { timeout: 10_000 },
      );
    } else {
      // A preset sets tiers only: the mode is the default again.
      assert.deepEqual(await effective('sandbox_mode'), { value: 'workspace-write', layer: 'default' }, p.name);
    }
    if (p.reviewer) assert.deepEqual(await effective('approvals_reviewer'), { value: p.reviewer, layer: 'profile' }, p.name);
    const warning = await picker.locator(`[data-profile="${p.name}"] [role="note"]`).count();
    if (p.warning) {
      assert.match(await picker.locator(`[data-profile="${p.name}"] [role="note"]`).textContent(), p.warning);
      await screenshot(page, 'profiles-full-access', { fullPage: true });
    } else {
      assert.equal(warning, 0, `${p.name} carries a warning`);
    }
  }
  // The presets' tiers reach the Permissions tab with the profile as their layer.
  await go('#/settings/permissions');
  const bash = page.locator('tr[data-tool="bash"]');
  await bash.waitFor({ timeout: 10_000 });
  await page.waitForFunction(() => document.querySelector('tr[data-tool="read_file"] select')?.value === 'P2', null, { timeout: 10_000 });
  assert.match(await bash.textContent(), /profile/);

  // None: the line leaves the file, the comments stay.
  await go('#/settings/general');
  await picker.locator('[data-profile=""] input').click();
  await page.waitForFunction(() => document.querySelector('[data-testid="profile-picker"]')?.getAttribute('data-current') === '', null, { timeout: 20_000 });
  assert.doesNotMatch(app.readConfig(), /^profile =/m);
  assert.ok(app.readConfig().includes('# My Airlock — written by hand'));
  assert.deepEqual(await effective('sandbox_mode'), { value: 'workspace-write', layer: 'default' });
});

test('the department and task editors choose their profile, and the core records it in the task’s effective policy', async () => {
  const dir = join(work, 'docs');
  mkdirSync(dir);
  await go('#/departments');
  await page.locator('[data-action="new-department"]').click();
  await page.locator('#dept-name').fill('e2e-docs');
  await page.locator('#dept-dir').fill(dir);
  await page.locator('#dept-def-profile').selectOption('read-only');
  await page.locator('[data-action="save-department"]').click();
  await page.locator('[data-department="e2e-docs"]').waitFor({ timeout: 10_000 });
  assert.match(await page.locator('[data-department="e2e-docs"]').textContent(), /profile read-only/);
  const dept = await app.api('GET', '/v1/departments/e2e-docs');
  assert.equal(dept.body.defaults.profile, 'read-only');

  await go('#/dispatch');
  await page.locator('[data-tab="tasks"]').click();
  await page.locator('[data-action="new-task"]').first().click();
  await page.locator('#task-name').fill('e2e-demo');
  await page.locator('#task-command').fill('true');
  await page.locator('#task-cwd').fill(dir);
  await page.locator('#task-tz').fill('UTC');
  await page.locator('#task-department').selectOption('e2e-docs');
  // The dangerous profile says what it gives up before it is saved.
  await page.locator('#task-ov-profile').selectOption('full-access');
  assert.match(await page.getByTestId('task-ov-profile-warning').textContent(), /nothing confines the agent/);
  await page.locator('#task-ov-profile').selectOption('demo');
  assert.equal(await page.getByTestId('task-ov-profile-warning').count(), 0);
  await page.locator('[data-action="save-task"]').click();
  await page.locator('[data-task="e2e-demo"] [data-profile="demo"]').waitFor({ timeout: 10_000 });
  const task = await app.api('GET', '/v1/tasks/e2e-demo');
  assert.equal(task.body.overrides.profile, 'demo');
  // The task's preset leaves the mode to its department's profile: read-only.
  assert.equal(task.body.effective.sandbox_mode, 'read-only');
  assert.equal(task.body.effective.profile, 'demo');
  await screenshot(page, 'profiles-task', { fullPage: true });
});
