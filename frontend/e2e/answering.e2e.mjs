// End to end, in a real browser engine against the real Go backend: the permission popup
// answers agents' requests (Allow always remembers, a P2 never offers it), and a task
// started outside known places waits under Waiting for you until its directory is
// authorized from the window, then runs.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { openWindow, repoRoot, startApp, screenshot, stopApp } from './harness.mjs';

let app;
let browser;
let page;
let outside;

before(async () => {
  app = await startApp();
  ({ browser, page } = await openWindow(app, { heading: 'Nothing is waiting for you' }));
  outside = mkdtempSync('/var/tmp/airlock-e2e-outside-');
});

after(async () => {
  await screenshot(page, 'answering');
  await browser?.close();
  if (outside) rmSync(outside, { recursive: true, force: true });
  await stopApp(app);
});

const popup = () => page.locator('[role="alertdialog"]');

function writeRequest(id, cwd) {
  return app.api('POST', '/v1/permission/await', {
    id,
    tool: 'write_file',
    params: { path: join(cwd, 'notes.md'), content: 'hello' },
    context: { cwd },
  });
}

test('a P1 request raises the popup; Allow always makes the next identical request silent', async () => {
  const cwd = join(app.home, 'work');
  mkdirSync(cwd, { recursive: true });
  const first = writeRequest('e2e-p1-a', cwd);
  await page.locator('[role="alertdialog"][data-request="e2e-p1-a"]').waitFor({ timeout: 20_000 });
  const text = await popup().textContent();
  assert.match(text, /write_file/);
  assert.match(text, /asks once/);
  assert.match(text, /Write a file/);
  assert.match(text, /notes\.md/);
  assert.equal(await page.getByTestId('waiting-count').textContent(), '1');

  await popup().locator('[data-action="allow-always"]').click();
  await popup().locator('[data-scope="always"]').click();
  const decision = await first;
  assert.equal(decision.status, 200, JSON.stringify(decision.body));
  assert.equal(decision.body.verdict, 'allow', JSON.stringify(decision.body));
  assert.equal(decision.body.answered_by, 'window');
  await popup().waitFor({ state: 'detached', timeout: 10_000 });

  const second = await writeRequest('e2e-p1-b', cwd);
  assert.equal(second.body.verdict, 'allow', JSON.stringify(second.body));
  assert.notEqual(second.body.answered_by, 'window', 'the second request was answered by the remembered grant, not a person');
  assert.equal(await popup().count(), 0, 'the identical request raised no popup');
  assert.equal(await page.getByTestId('waiting-count').textContent(), '0');
});

test('a P2 request offers no Allow always; Esc keeps it waiting; Review brings it back; Deny answers', async () => {
  const cwd = join(app.home, 'repo');
  mkdirSync(cwd, { recursive: true });
  const waiting = app.api('POST', '/v1/permission/await', {
    id: 'e2e-p2',
    tool: 'bash',
    params: { command: 'git push --force origin main' },
    context: { cwd },
  });
  const dialog = page.locator('[role="alertdialog"][data-request="e2e-p2"]');
  await dialog.waitFor({ timeout: 20_000 });
  assert.equal(await dialog.getAttribute('data-tier'), 'P2');
  assert.match(await dialog.textContent(), /asks every time/);
  assert.equal(await dialog.locator('[data-action="allow-always"]').count(), 0, 'a P2 offers no Allow always');
  await dialog.locator('[data-action="allow-once"]').waitFor();
  // Deny is the default: the focus is on it, and Enter there denies (never approves).
  await page.waitForFunction(() => document.activeElement?.getAttribute('data-action') === 'deny');

  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached', timeout: 5_000 });
  const row = page.locator('[data-approval="e2e-p2"]');
  await row.waitFor();
  assert.equal(await row.locator('[data-action="allow-once"]').count(), 0, 'a P2 is allowed only after review in the popup');
  await row.locator('[data-action="review"]').click();
  await dialog.waitFor({ timeout: 5_000 });
  await page.keyboard.press('Enter');
  const decision = await waiting;
  assert.equal(decision.body.verdict, 'deny', JSON.stringify(decision.body));
  await dialog.waitFor({ state: 'detached', timeout: 10_000 });
  await row.waitFor({ state: 'detached', timeout: 10_000 });
});

test('a request answered elsewhere leaves the popup live; several queue as "1 of N"', async () => {
  const cwd = join(app.home, 'queue');
  mkdirSync(cwd, { recursive: true });
  const asks = ['q1', 'q2', 'q3'].map((id) =>
    app.api('POST', '/v1/permission/await', { id: `e2e-${id}`, tool: 'bash', params: { command: `rm -rf ./${id}-build` }, context: { cwd } }),
  );
  await page.getByTestId('popup-count').filter({ hasText: '1 of 3' }).waitFor({ timeout: 20_000 });
  const top = await popup().getAttribute('data-request');
  // Answered from the CLI: the popup moves on without it.
  const r = await app.api('POST', `/v1/approvals/${top}/answer`, { allow: false, reason: 'answered at a terminal', by: 'api' });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  await page.getByTestId('popup-count').filter({ hasText: '1 of 2' }).waitFor({ timeout: 10_000 });
  assert.notEqual(await popup().getAttribute('data-request'), top);
  for (let i = 0; i < 2; i++) {
    const id = await popup().getAttribute('data-request');
    await popup().locator('[data-action="deny"]').click();
    await page.waitForFunction((gone) => document.querySelector('[role="alertdialog"]')?.getAttribute('data-request') !== gone, id, { timeout: 10_000 });
  }
  await popup().waitFor({ state: 'detached', timeout: 10_000 });
  for (const d of await Promise.all(asks)) assert.equal(d.body.verdict, 'deny');
});

test('a task outside known places waits under Waiting for you; Authorize this directory lets it run', async () => {
  const name = 'e2e-outside';
  const created = await app.api('POST', '/v1/tasks', {
    name,
    argv: ['sh', '-c', 'echo ran here > out.txt'],
    cwd: outside,
    schedule: '',
    time_zone: 'UTC',
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const run = await app.api('POST', `/v1/tasks/${name}/run-now`, {});
  assert.equal(run.status, 200, JSON.stringify(run.body));

  const row = page.locator(`[data-held="dir:${outside}"]`);
  await row.waitFor({ timeout: 20_000 });
  const text = await row.textContent();
  assert.match(text, new RegExp(`${name} wants to start in`));
  assert.match(text, /It would be able to write:/);
  assert.match(text, /1 run waiting here/);
  assert.equal(await page.getByTestId('waiting-count').textContent(), '1');
  assert.equal(existsSync(join(outside, 'out.txt')), false, 'the held run did not start');

  await row.locator('[data-action="authorize"]').click();
  assert.match(await row.textContent(), /may write anywhere under it without asking/);
  await row.locator('[data-action="confirm-authorize"]').click();
  await row.waitFor({ state: 'detached', timeout: 20_000 });
  assert.equal(await page.getByTestId('waiting-count').textContent(), '0');

  // It runs: the run succeeds and its output is where it was asked to write.
  const deadline = Date.now() + 30_000;
  let status = '';
  while (Date.now() < deadline) {
    const runs = await app.api('GET', `/v1/runs?task=${name}`);
    status = (Array.isArray(runs.body) ? runs.body : runs.body.runs ?? [])[0]?.status ?? '';
    if (['succeeded', 'failed', 'denied', 'timed_out'].includes(status)) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.equal(status, 'succeeded');
  assert.equal(readFileSync(join(outside, 'out.txt'), 'utf8'), 'ran here\n');
});

// The tray, as a panel drives it over D-Bus: a P2 line offers only "Review…", and
// clicking it raises the window's popup on that request.
test('the tray lists a P2 request with Review…, which opens the popup in the window', async () => {
  const { address, name } = app.tray();
  const gdbus = (...args) =>
    execFileSync('gdbus', ['call', '--session', '-d', name, '-o', '/StatusNotifierItem/menu', ...args], {
      encoding: 'utf8',
      env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: address },
    });
  const cwd = join(app.home, 'tray');
  mkdirSync(cwd, { recursive: true });
  const waiting = app.api('POST', '/v1/permission/await', { id: 'e2e-tray-p2', tool: 'bash', params: { command: 'git push --force origin main' }, context: { cwd } });
  const dialog = page.locator('[role="alertdialog"][data-request="e2e-tray-p2"]');
  await dialog.waitFor({ timeout: 20_000 });
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached', timeout: 5_000 });

  // Read the menu until the request's line is there (the tray redraws on permission.requested).
  let id;
  let layout = '';
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline && id === undefined) {
    layout = gdbus('-m', 'com.canonical.dbusmenu.GetLayout', '--', '0', '-1', '[]');
    // GVariant text: each item is <(ID, {'label': <'…'>, …}, [children])>.
    const m = /<\((\d+), \{[^}]*'label': <'(P2 bash [^']*)'>/.exec(layout);
    if (m && /Quit Airlock/.test(layout)) id = Number(m[1]);
    else await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(id !== undefined, `no P2 line in the tray menu:\n${layout}`);
  assert.match(layout, /Airlock — 1 waiting/);
  assert.match(layout, /P2 bash git push --force origin main — Review…/);
  assert.doesNotMatch(layout, /'label': <'Allow once'>/, 'the tray offers no allow for a P2');

  gdbus('-m', 'com.canonical.dbusmenu.Event', String(id), 'clicked', '<int32 0>', '0');
  await dialog.waitFor({ timeout: 10_000 });
  await dialog.locator('[data-action="deny"]').click();
  assert.equal((await waiting).body.verdict, 'deny');
});

test('Skip cancels a held run: it never runs and nothing is authorized', async () => {
  const dir = mkdtempSync('/var/tmp/airlock-e2e-skip-');
  try {
    const name = 'e2e-skip';
    const created = await app.api('POST', '/v1/tasks', { name, argv: ['sh', '-c', 'echo ran > out.txt'], cwd: dir, schedule: '', time_zone: 'UTC' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const run = await app.api('POST', `/v1/tasks/${name}/run-now`, {});
    assert.equal(run.status, 200, JSON.stringify(run.body));
    const row = page.locator(`[data-held="dir:${dir}"]`);
    await row.waitFor({ timeout: 20_000 });
    await row.locator('[data-action="skip"]').click();
    await row.waitFor({ state: 'detached', timeout: 20_000 });
    const runs = await app.api('GET', `/v1/runs?task=${name}`);
    const list = Array.isArray(runs.body) ? runs.body : (runs.body.runs ?? []);
    assert.equal(list[0]?.status, 'cancelled', JSON.stringify(runs.body));
    assert.equal(existsSync(join(dir, 'out.txt')), false, 'the skipped run ran');
    const places = await app.api('GET', '/v1/places');
    assert.doesNotMatch(JSON.stringify(places.body), new RegExp(dir), 'Skip authorized the directory');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
