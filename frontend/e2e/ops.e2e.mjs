// End to end, in a real browser engine against the real Go backend: an operation plan
// opened through the local API (as `airlock ops plan --file` does) is diffed, approved,
// applied and verified from the Ops page. The approval token is shown once — after a
// reload it is gone and the plan says approved; the diff renders as a unified diff; the
// apply and verify show their evidence; the journal shows its chain intact, live, and
// names the entry after someone edits the database.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openWindow, repoRoot, startApp, screenshot, stopApp } from './harness.mjs';

let app;
let browser;
let page;
let work;
let keyringDir;
let keyring;

// The ops journal is signed with a key kept in the OS keyring, and Airlock never falls
// back to a file: run an unlocked gnome-keyring on the app's private session bus, as
// scripts/with-test-keyring.sh does for the Go tests.
async function startKeyring(address) {
  keyringDir = mkdtempSync('/var/tmp/airlock-e2e-keyring-');
  keyring = spawn('gnome-keyring-daemon', ['--foreground', '--unlock', '--components=secrets'], {
    env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: address, XDG_DATA_HOME: keyringDir, XDG_RUNTIME_DIR: keyringDir },
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  keyring.stdin.end('airlock-test');
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      const names = execFileSync('gdbus', ['call', '--address', address, '--dest', 'org.freedesktop.DBus', '--object-path', '/org/freedesktop/DBus', '--method', 'org.freedesktop.DBus.ListNames'], { encoding: 'utf8' });
      if (names.includes("'org.freedesktop.secrets'")) return;
    } catch {
      // the bus is not answering yet
    }
    if (Date.now() > deadline) throw new Error('gnome-keyring-daemon did not register org.freedesktop.secrets on the app bus');
    await sleep(100);
  }
}

const plan = {
  target: { provider: 'file', device: 'app.conf' },
  intent: 'move the shop to port 8080',
  workdir: '.',
  apply: { shell: 'cp new.conf app.conf' },
  inputs: ['new.conf'],
  snapshot: { argv: ['cat', 'app.conf'] },
  diff: { argv: ['diff', '-u', 'app.conf', 'new.conf'] },
  timeout_seconds: 30,
  steps: [
    { description: 'replace app.conf with new.conf', effect: 'change the port', reversibility: 'reversible', blast_radius: 'med', rollback: 'restore app.conf' },
    { description: 'clients reconnect', effect: 'drop open connections', reversibility: 'irreversible', blast_radius: 'low' },
  ],
  verify: [
    { name: 'port is 8080', command: 'grep port= app.conf', expect_text: 'port=8080' },
    { name: 'name kept', command: 'grep name= app.conf', expect_text: 'name=shop' },
  ],
};

// shot saves the whole Ops page (its scrolling main area included) to artifacts/e2e-NAME.png.
async function shot(name) {
  if (process.env.E2E_SCREENSHOTS === '0') return;
  mkdirSync(join(repoRoot, 'artifacts'), { recursive: true });
  const height = await page.evaluate(() => document.querySelector('main')?.scrollHeight ?? 740);
  const size = page.viewportSize();
  await page.setViewportSize({ width: size.width, height: Math.min(height + 20, 6000) });
  await page.screenshot({ path: join(repoRoot, 'artifacts', `e2e-${name}.png`) }).catch(() => {});
  await page.setViewportSize(size);
}

async function openPlan() {
  const res = await app.api('POST', '/v1/ops/plans', { data: JSON.stringify(plan), base_dir: work, by: 'e2e' });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

before(async () => {
  app = await startApp();
  await startKeyring(app.tray().address);
  ({ browser, page } = await openWindow(app, { hash: '#/ops', heading: 'Ops', permissions: ['clipboard-read', 'clipboard-write'] }));
  work = mkdtempSync('/var/tmp/airlock-e2e-ops-');
  writeFileSync(join(work, 'app.conf'), 'name=shop\nport=80\n');
  writeFileSync(join(work, 'new.conf'), 'name=shop\nport=8080\n');
});

after(async () => {
  await screenshot(page, 'ops', { fullPage: true });
  await browser?.close();
  await stopApp(app);
  if (keyring && keyring.exitCode === null) keyring.kill('SIGTERM');
  if (work) rmSync(work, { recursive: true, force: true });
  if (keyringDir) rmSync(keyringDir, { recursive: true, force: true });
});

test('a plan is diffed, approved with its token shown once, applied and verified from the window; the journal stays intact', async () => {
  const p = await openPlan();
  // The list shows the new plan live (ops.plan.updated), without a reload.
  const row = page.locator(`tr[data-plan="${p.id}"]`);
  await row.waitFor({ timeout: 15_000 });
  await row.getByRole('link', { name: plan.intent }).click();
  const detail = page.locator(`article[data-plan="${p.id}"]`);
  await detail.waitFor({ timeout: 10_000 });
  assert.equal(await page.getByTestId('plan-hash').textContent(), p.hash);

  // Steps: the most dangerous first, in words.
  const steps = detail.locator('li.step');
  assert.equal(await steps.first().getAttribute('data-reversibility'), 'irreversible');
  assert.match(await steps.first().textContent(), /cannot be undone/);

  // No diff, no approval: run the diff on demand; it renders as a unified diff.
  assert.equal(await detail.locator('[data-action="approve"]').count(), 0, 'approve offered before a diff');
  await detail.locator('[data-action="run-diff"]').click();
  await detail.locator('.diff .l.add').first().waitFor({ timeout: 30_000 });
  assert.deepEqual(await detail.locator('.diff .l.add').allTextContents(), ['+port=8080']);
  assert.deepEqual(await detail.locator('.diff .l.del').allTextContents(), ['-port=80']);
  assert.equal(readFileSync(join(work, 'app.conf'), 'utf8'), 'name=shop\nport=80\n', 'the diff changed the file');

  // Approve: the confirmation shows the full hash; the token appears once.
  await detail.locator('[data-action="approve"]').click();
  assert.equal(await page.getByTestId('approve-hash').textContent(), p.hash);
  await page.locator('[data-action="approve-confirm"]').click();
  const tokenBox = page.getByTestId('token-once');
  await tokenBox.waitFor({ timeout: 10_000 });
  const token = (await page.getByTestId('token-value').textContent()).trim();
  assert.match(token, /^[A-Za-z0-9_-]{43}$/);
  assert.match(await tokenBox.textContent(), /It will not be shown again/);
  await tokenBox.locator('[data-action="copy-token"]').click();
  await tokenBox.getByRole('button', { name: 'Copied' }).waitFor({ timeout: 5_000 });
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), token);
  await shot('ops-token');
  await page.locator(`article[data-status="approved"]`).waitFor({ timeout: 10_000 });

  // A reload shows the plan approved and never the token again.
  await page.reload();
  await page.waitForFunction(() => window.go && window.runtime, null, { timeout: 30_000 });
  await page.locator(`article[data-plan="${p.id}"][data-status="approved"]`).waitFor({ timeout: 15_000 });
  assert.equal(await page.getByTestId('token-once').count(), 0, 'the token box came back after a reload');
  assert.ok(!(await page.content()).includes(token), 'the token is in the page after a reload');
  assert.match(await page.getByTestId('plan-status').textContent(), /approved/);
  assert.match(await page.getByTestId('approval-state').textContent(), /Approved\s+by window/);
  assert.equal(await page.locator('[data-action="approve"]').count(), 0, 'approve offered again while the token is live');

  // Apply with the token the person copied; the outcome and its evidence show.
  await page.locator('#apply-token').fill(token);
  await page.locator('[data-action="apply"]').click();
  const outcome = page.getByTestId('apply-outcome');
  await outcome.waitFor({ timeout: 60_000 });
  assert.equal(await outcome.getAttribute('data-outcome'), 'applied', await outcome.textContent());
  assert.equal(readFileSync(join(work, 'app.conf'), 'utf8'), 'name=shop\nport=8080\n');
  await page.locator(`article[data-status="applied"]`).waitFor({ timeout: 10_000 });
  assert.match(await page.getByTestId('apply-section').textContent(), /Snapshot after[\s\S]*port=8080/);
  // The same token again runs nothing (through the API, as an agent would try).
  const replay = await app.api('POST', `/v1/ops/plans/${p.id}/apply`, { token });
  assert.equal(replay.status, 403, JSON.stringify(replay.body));

  // Verify: each assertion with pass or fail and its output.
  await page.locator('[data-action="verify"]').click();
  const summary = page.getByTestId('verify-summary');
  await summary.waitFor({ timeout: 60_000 });
  assert.match(await summary.textContent(), /verified\s+2 of 2 assertions passed/);
  assert.deepEqual(await page.locator('li.assertion').evaluateAll((els) => els.map((e) => e.getAttribute('data-passed'))), ['true', 'true']);
  assert.match(await page.locator('li.assertion').first().textContent(), /port=8080/);

  // The journal: newest first, live, the chain intact; nowhere the token.
  const journal = page.getByTestId('journal');
  await journal.locator('li.entry[data-event="verified"]').waitFor({ timeout: 10_000 });
  const events = await journal.locator('li.entry').evaluateAll((els) => els.map((e) => e.getAttribute('data-event')));
  assert.deepEqual(events.slice(0, 4), ['verified', 'apply_refused', 'apply_finished', 'apply_started']);
  assert.equal(events.at(-1), 'planned');
  assert.equal(await journal.getByTestId('chain-state').getAttribute('data-state'), 'intact');
  assert.match(await journal.getByTestId('chain-state').textContent(), /Chain intact/);
  assert.ok(!(await page.content()).includes(token), 'the token is in the page');
  await shot('ops-verified');
  await page.emulateMedia({ colorScheme: 'dark' });
  await shot('ops-verified-dark');
  await page.emulateMedia({ colorScheme: 'light' });
});

test('"Apply now" applies with the token the window just showed, and then the token is gone', async () => {
  writeFileSync(join(work, 'app.conf'), 'name=shop\nport=80\n');
  const p = await openPlan();
  await page.goto(`${app.url}#/ops/${p.id}`);
  const detail = page.locator(`article[data-plan="${p.id}"]`);
  await detail.waitFor({ timeout: 15_000 });
  await detail.locator('[data-action="run-diff"]').click();
  await detail.locator('[data-action="approve"]').click({ timeout: 30_000 });
  await page.locator('[data-action="approve-confirm"]').click();
  const token = (await page.getByTestId('token-value').textContent({ timeout: 10_000 })).trim();
  await page.locator('[data-action="apply-now"]').click();
  const outcome = page.getByTestId('apply-outcome');
  await outcome.waitFor({ timeout: 60_000 });
  assert.equal(await outcome.getAttribute('data-outcome'), 'applied', await outcome.textContent());
  assert.equal(await page.getByTestId('token-once').count(), 0, 'the spent token is still shown');
  assert.ok(!(await page.content()).includes(token), 'the spent token is in the page');
  assert.equal(readFileSync(join(work, 'app.conf'), 'utf8'), 'name=shop\nport=8080\n');
});

test('an agent waiting for approval of a plan is named on the plan, and its request answered in the popup leaves it', async () => {
  const p = await openPlan();
  const diff = await app.api('POST', `/v1/ops/plans/${p.id}/diff`, { run: true });
  assert.equal(diff.status, 200, JSON.stringify(diff.body));
  await page.goto(`${app.url}#/ops/${p.id}`);
  await page.locator(`article[data-plan="${p.id}"][data-status="diffed"]`).waitFor({ timeout: 15_000 });
  // As the MCP server does for an agent's ops_approve: it waits for the person's answer.
  const asked = app.api('POST', `/v1/ops/plans/${p.id}/approve-request`, { context: { session: 'deploy-bot', cwd: work } });
  const notice = page.getByTestId('agent-waiting');
  await notice.waitFor({ timeout: 15_000 }).catch(async (err) => {
    const pending = await page.evaluate(() => window.go.desktop.Facade.PendingApprovals());
    const settled = await Promise.race([asked, sleep(100).then(() => 'still waiting')]);
    throw new Error(`${err.message}\npending: ${JSON.stringify(pending)}\nrequest: ${JSON.stringify(settled)}`);
  });
  assert.match(await notice.textContent(), /deploy-bot[\s\S]*hands the token to the agent/);
  const popup = page.locator('[role="alertdialog"]');
  await popup.waitFor({ timeout: 10_000 });
  assert.match(await popup.textContent(), /ops_approve/);
  await popup.locator('[data-action="deny"]').click();
  const answer = await asked;
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal(answer.body.decision?.verdict, 'deny', JSON.stringify(answer.body));
  assert.equal(answer.body.approval, undefined, 'a denied request carried a token');
  await notice.waitFor({ state: 'detached', timeout: 10_000 });
});

test('reject needs a reason and revokes the approval', async () => {
  const p = await openPlan();
  await page.goto(`${app.url}#/ops/${p.id}`);
  const detail = page.locator(`article[data-plan="${p.id}"]`);
  await detail.waitFor({ timeout: 15_000 });
  await detail.locator('[data-action="reject"]').click();
  assert.equal(await detail.locator('[data-action="reject-confirm"]').isDisabled(), true);
  await detail.locator('#reject-reason').fill('not during the sale');
  await detail.locator('[data-action="reject-confirm"]').click();
  await page.locator(`article[data-plan="${p.id}"][data-status="rejected"]`).waitFor({ timeout: 10_000 });
  const entry = page.getByTestId('journal').locator('li.entry[data-event="rejected"]').first();
  await entry.waitFor({ timeout: 10_000 });
  assert.match(await entry.textContent(), /not during the sale[\s\S]*by window/);
});

test('an edited journal shows where the chain broke', async () => {
  const db = join(app.home, 'data', 'airlock.db');
  const found = execFileSync('find', [app.home, '-name', '*.db'], { encoding: 'utf8' }).trim().split('\n')[0] || db;
  execFileSync('sqlite3', [found, "DROP TRIGGER ops_journal_no_update; UPDATE ops_journal_entries SET actor = 'mallory' WHERE event = 'approved';"]);
  await page.reload();
  await page.waitForFunction(() => window.go && window.runtime, null, { timeout: 30_000 });
  const chain = page.getByTestId('journal').getByTestId('chain-state');
  await chain.waitFor({ timeout: 15_000 });
  assert.equal(await chain.getAttribute('data-state'), 'broken');
  assert.match(await chain.textContent(), /Chain broken at entry \d+/);
  assert.match(await chain.textContent(), /changed after it was written/);
  assert.ok((await page.locator('li.entry.broken').count()) >= 1);
  await shot('ops-journal-broken');
});
