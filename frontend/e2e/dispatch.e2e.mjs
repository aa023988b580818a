// End to end, in a real browser engine against the real Go backend: a department is
// added in the window; a task created in the window in a directory outside known places
// waits under Waiting for you, is authorized there, and its run streams its log live in
// the run view; the schedule field shows the core's error for a malformed line and a
// preview for a good one; a full-access + never task carries the red warning; a run's
// view lists its decisions, with who answered (or that it was handed over) and what ran.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { openWindow, repoRoot, startApp, screenshot, stopApp } from './harness.mjs';

let app;
let browser;
let page;
let work; // a scratch directory under /var/tmp (the sandbox gives runs a private /tmp)

before(async () => {
  app = await startApp();
  ({ browser, page } = await openWindow(app, { heading: 'Nothing is waiting for you' }));
  work = mkdtempSync('/var/tmp/airlock-e2e-dispatch-');
});

after(async () => {
  await screenshot(page, 'dispatch', { fullPage: true });
  await browser?.close();
  if (work) rmSync(work, { recursive: true, force: true });
  await stopApp(app);
});

/** shot saves a picture of the window at a step worth looking at (artifacts/e2e-dispatch-NAME.png). */
async function shot(name) {
  await screenshot(page, `dispatch-${name}`, { fullPage: true });
}

async function go(hash) {
  await page.evaluate((h) => (location.hash = h), hash);
}

async function tasksTab() {
  await go('#/dispatch');
  await page.locator('[data-tab="tasks"]').click();
}

async function newTask({ name, command, cwd, schedule = '', tz = 'UTC' }) {
  await tasksTab();
  await page.locator('[data-action="new-task"]').first().click();
  await page.locator('#task-name').fill(name);
  await page.locator('#task-command').fill(command);
  await page.locator('#task-cwd').fill(cwd);
  await page.locator('#task-schedule').fill(schedule);
  await page.locator('#task-tz').fill(tz);
}

test('a department is added in the window and listed with its defaults', async () => {
  const dir = join(work, 'platform');
  mkdirSync(dir);
  await go('#/departments');
  await page.getByRole('heading', { name: 'No departments yet' }).waitFor({ timeout: 10_000 });
  await page.locator('[data-action="new-department"]').click();
  await page.locator('#dept-name').fill('e2e-platform');
  // The picker needs the GTK window; in the browser the field is typed.
  await page.locator('#dept-dir').fill(dir);
  await page.locator('#dept-def-mode').selectOption('read-only');
  await page.locator('#dept-def-network').selectOption('on');
  assert.match(await page.locator('.grants').textContent(), /start without asking/);
  await page.locator('[data-action="save-department"]').click();
  const row = page.locator('[data-department="e2e-platform"]');
  await row.waitFor({ timeout: 10_000 });
  const text = await row.textContent();
  assert.match(text, /read-only/);
  assert.match(text, /network on/);
  assert.match(text, /directory present/);
  await shot('departments');
  const listed = await app.api('GET', '/v1/departments');
  assert.equal(listed.status, 200);
  assert.deepEqual(
    listed.body.map((d) => [d.name, d.directory, d.defaults.sandbox_mode]),
    [['e2e-platform', dir, 'read-only']],
  );

  // A bad directory is refused by the core, shown by the field.
  await page.locator('[data-action="new-department"]').click();
  await page.locator('#dept-name').fill('e2e-gone');
  await page.locator('#dept-dir').fill(join(work, 'does-not-exist'));
  await page.locator('[data-action="save-department"]').click();
  const err = page.locator('[data-field-error="dir"]');
  await err.waitFor({ timeout: 10_000 });
  assert.match(await err.textContent(), /does not exist: create it first/);
  await page.getByRole('button', { name: 'Cancel' }).click();
});

test('the schedule field shows the core error for a malformed line and a preview for a good one', async () => {
  await newTask({ name: 'e2e-preview', command: 'true', cwd: work, schedule: '61 * * * *' });
  const preview = page.getByTestId('schedule-preview');
  const error = preview.locator('[data-field-error="schedule"]');
  await error.waitFor({ timeout: 10_000 });
  assert.match(await error.textContent(), /invalid schedule "61 \* \* \* \*".*use five fields/s);
  assert.equal(await page.locator('#task-schedule').getAttribute('aria-invalid'), 'true');

  await page.locator('#task-schedule').fill('30 2 * * 1-5');
  await page.locator('#task-tz').fill('Europe/Madrid');
  await page.waitForFunction(() => document.querySelector('[data-testid="schedule-preview"]')?.getAttribute('data-valid') === 'true' && /Madrid/.test(document.querySelector('[data-testid="schedule-preview"] .words')?.textContent ?? ''));
  assert.match(await preview.locator('.words').textContent(), /Europe\/Madrid/);
  assert.equal(await preview.locator('ol.next li').count(), 5);
  assert.match(await preview.locator('ol.next li').first().textContent(), /02:30/);
  await shot('editor-preview');

  await page.locator('#task-tz').fill('Mars/Olympus');
  await page.waitForFunction(() => /unknown time zone/.test(document.querySelector('[data-testid="schedule-preview"]')?.textContent ?? ''));
  await page.getByRole('button', { name: 'Cancel' }).click();
});

test('a task created in the window outside known places waits, is authorized, and streams its log live', async () => {
  const outside = join(work, 'legacy');
  mkdirSync(outside);
  // The run prints a line, then waits for the test to let it go: the second line can
  // only reach the window live, through run.log.
  await newTask({
    name: 'e2e-outside',
    command: `sh -c 'echo first-line; while [ ! -e release ]; do sleep 0.1; done; echo second-line'`,
    cwd: outside,
    schedule: '0 3 * * *',
  });
  await page.locator('[data-action="save-task"]').click();
  const row = page.locator('[data-task="e2e-outside"]');
  await row.waitFor({ timeout: 10_000 });
  assert.match(await row.getByTestId('task-schedule').textContent(), /UTC/);
  assert.match(await row.textContent(), /next/);
  const created = await app.api('GET', '/v1/tasks/e2e-outside');
  assert.deepEqual(created.body.argv, ['sh', '-c', 'echo first-line; while [ ! -e release ]; do sleep 0.1; done; echo second-line']);

  await row.locator('[data-action="run-now"]').click();
  await go('#/waiting');
  const held = page.locator(`[data-held="dir:${outside}"]`);
  await held.waitFor({ timeout: 20_000 });
  assert.match(await held.textContent(), /e2e-outside/);
  await held.locator('[data-action="authorize"]').click();
  await held.locator('[data-action="confirm-authorize"]').click();
  await held.waitFor({ state: 'detached', timeout: 20_000 });

  await go('#/dispatch');
  await page.locator('[data-tab="runs"]').click();
  const runRow = page.locator('[data-run-row]').first();
  await runRow.waitFor({ timeout: 10_000 });
  assert.match(await runRow.textContent(), /e2e-outside/);
  await runRow.click();
  const log = page.getByTestId('run-log');
  await page.waitForFunction(() => /first-line/.test(document.querySelector('[data-testid="run-log"]')?.textContent ?? ''), null, { timeout: 20_000 });
  assert.equal(await page.locator('.detail [data-status]').first().getAttribute('data-status'), 'running');
  assert.doesNotMatch(await log.textContent(), /second-line/);
  assert.equal(await page.getByTestId('log-live').count(), 1);
  await shot('run-live');

  writeFileSync(join(outside, 'release'), '');
  await page.waitForFunction(() => /second-line/.test(document.querySelector('[data-testid="run-log"]')?.textContent ?? ''), null, { timeout: 20_000 });
  await page.waitForFunction(() => document.querySelector('.detail [data-status]')?.getAttribute('data-status') === 'succeeded', null, { timeout: 20_000 });
  const shown = await log.textContent();
  assert.equal(shown.match(/first-line/g)?.length, 1, `the log repeats lines:\n${shown}`);
  assert.equal(await page.getByTestId('log-live').count(), 0, 'a finished run still says live');
});

test('the Runs view shows a new run and its state changes as they happen', async () => {
  await go('#/dispatch');
  await page.locator('[data-tab="runs"]').click();
  await page.locator('#runs-task').selectOption('e2e-outside');
  await page.locator('[data-run-row]').first().waitFor({ timeout: 10_000 });
  const before = await page.locator('[data-run-row]').count();
  // Started from the CLI: the window learns of it through run.updated only.
  const started = await app.api('POST', '/v1/tasks/e2e-outside/run-now', {});
  assert.equal(started.status, 200, JSON.stringify(started.body));
  const row = page.locator(`[data-run-row="${started.body.id}"]`);
  await row.waitFor({ timeout: 20_000 });
  assert.equal(await page.locator('[data-run-row]').count(), before + 1);
  // Its directory is authorized now and the release file exists: it runs to the end.
  await page.waitForFunction((id) => document.querySelector(`[data-run-row="${id}"] [data-status]`)?.getAttribute('data-status') === 'succeeded', started.body.id, { timeout: 20_000 });
});

test("a run's view lists what it asked Airlock: who answered, or that it was handed over, and whether it ran", async () => {
  const runs = await app.api('GET', '/v1/runs?task=e2e-outside');
  const run = (Array.isArray(runs.body) ? runs.body : runs.body.runs)[0];
  // As the run's agent asks through its ask-only channel: a read it then reports ran, and
  // a bash nobody answers before its deadline, which its hook hands to the agent's prompt.
  // (The run's own command is the third decision.)
  const context = { run: String(run.id), cwd: join(work, 'legacy') };
  const read = await app.api('POST', '/v1/permission/await', { tool: 'read_file', params: { path: join(work, 'legacy', 'release') }, context, call_id: 'e2e-read' });
  assert.equal(read.body.verdict, 'allow', JSON.stringify(read.body));
  const after = await app.api('POST', '/v1/permission/after', { request: { tool: 'read_file', call_id: 'e2e-read', context }, decision: { verdict: 'allow' }, outcome: { ran: true } });
  assert.equal(after.status, 200, JSON.stringify(after.body));
  const handed = await app.api('POST', '/v1/permission/await', { tool: 'bash', params: { command: 'make deploy' }, context, call_id: 'e2e-bash', timeout: 1e9, hand_over: true });
  assert.equal(handed.body.answered_by, 'handed-over', JSON.stringify(handed.body));

  await go('#/dispatch');
  await page.locator('[data-tab="runs"]').click();
  await page.locator('#runs-task').selectOption('e2e-outside');
  await page.locator(`[data-run-row="${run.id}"]`).click();
  await page
    .waitForFunction(() => document.querySelectorAll('[data-testid="run-decisions"] tr[data-decision]').length === 3, null, { timeout: 20_000 })
    .catch(async (err) => {
      throw new Error(`${err.message}; the run view shows: ${await page.locator('.detail').textContent().catch(() => '(no run view)')}`);
    });
  const rowOf = (tool) => page.locator('[data-testid="run-decisions"] tr[data-decision]', { hasText: tool });
  assert.equal((await rowOf('read_file').locator('[data-ran]').textContent()).trim(), 'ran');
  assert.match(await rowOf('bash').locator('[data-answered]').textContent(), /handed to the agent's own prompt/);
  assert.equal((await rowOf('bash').locator('[data-verdict]').textContent()).trim(), 'ask');
  // The run's own command is there too: allowed as its task's, and it ran.
  assert.equal((await rowOf('exec').locator('[data-ran]').textContent()).trim(), 'ran');
  assert.match(await rowOf('exec').locator('[data-answered]').textContent(), /by task/);
  await shot('run-decisions');
});

test('a full-access + never task carries the red warning, in the editor and in the list', async () => {
  await newTask({ name: 'e2e-danger', command: 'true', cwd: work });
  await page.locator('#task-department').selectOption('e2e-platform');
  await page.locator('#task-ov-mode').selectOption('full-access');
  assert.equal(await page.locator('[data-warning]').count(), 0);
  await page.locator('#task-ov-approval').selectOption('never');
  const warning = page.locator('form [data-warning]');
  await warning.waitFor({ timeout: 5_000 });
  assert.match(await warning.textContent(), /Full access with approval never/);
  await shot('editor-warning');
  await page.locator('[data-action="save-task"]').click();
  const row = page.locator('[data-task="e2e-danger"]');
  await row.waitFor({ timeout: 10_000 });
  assert.match(await row.locator('[data-warning]').textContent(), /Full access with approval never: every run may change anything/);
  assert.equal(await row.locator('[data-mode="full-access"]').count(), 1);
  await shot('tasks-warning');
  await page.emulateMedia({ colorScheme: 'dark' });
  await shot('tasks-warning-dark');
  await page.emulateMedia({ colorScheme: 'light' });
  // The safe task has no warning.
  assert.equal(await page.locator('[data-task="e2e-outside"] [data-warning]').count(), 0);

  // Edit: asking first takes the warning away; remove asks before it acts.
  await row.locator('[data-action="edit"]').click();
  await page.locator('#task-ov-approval').selectOption('on-request');
  await page.locator('[data-action="save-task"]').click();
  await row.waitFor({ timeout: 10_000 });
  await page.waitForFunction(() => document.querySelectorAll('[data-task="e2e-danger"] [data-warning]').length === 0);
  await row.locator('[data-action="remove"]').click();
  await row.locator('[data-action="confirm-remove"]').click();
  await row.waitFor({ state: 'detached', timeout: 10_000 });
  assert.equal((await app.api('GET', '/v1/tasks/e2e-danger')).status, 404);
});

test('a task removed from the CLI leaves the window without a reload', async () => {
  await tasksTab();
  const created = await app.api('POST', '/v1/tasks', { name: 'e2e-cli', argv: ['true'], cwd: work, schedule: '@daily', time_zone: 'UTC' });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const row = page.locator('[data-task="e2e-cli"]');
  await row.waitFor({ timeout: 10_000 });
  const removed = await app.api('DELETE', '/v1/tasks/e2e-cli');
  assert.equal(removed.status, 200, JSON.stringify(removed.body));
  await row.waitFor({ state: 'detached', timeout: 10_000 });
});

test('a thousand runs are listed a page at a time and stay light', async () => {
  const created = await app.api('POST', '/v1/tasks', { name: 'e2e-many', argv: ['true'], cwd: work, schedule: '', time_zone: 'UTC' });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  // A thousand finished runs, as three years of a nightly task leave, written straight
  // into the database (running them would take minutes).
  const sql = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
    INSERT INTO runs (task_id, scheduled_at, "trigger", task_name, status, cwd, exit_code, started_at, finished_at, created_at, updated_at,
      policy_sandbox_mode, policy_network, policy_approval_policy, policy_backend, policy_execution_mode, log_bytes, log_truncated, log_pruned, paused)
    SELECT ${created.body.id}, datetime('2023-01-01', '+' || i || ' days') || '+00:00', 'schedule', 'e2e-many',
      CASE WHEN i % 7 = 0 THEN 'failed' ELSE 'succeeded' END, '${work}', CASE WHEN i % 7 = 0 THEN 1 ELSE 0 END,
      datetime('2023-01-01', '+' || i || ' days') || '+00:00', datetime('2023-01-01', '+' || i || ' days', '+12 seconds') || '+00:00',
      datetime('now') || '+00:00', datetime('now') || '+00:00', 'workspace-write', 0, 'on-request', 'auto', 'local', 0, 0, 0, 0 FROM n;`;
  execFileSync('sqlite3', ['-cmd', '.timeout 20000', join(app.home, 'data', 'airlock.db'), sql]);

  await go('#/dispatch');
  await page.locator('[data-tab="runs"]').click();
  await page.locator('#runs-task').selectOption('e2e-many');
  await page.waitForFunction(() => document.querySelectorAll('[data-run-row]').length === 50 && /e2e-many/.test(document.querySelector('[data-run-row]')?.textContent ?? ''));
  const newest = await page.locator('[data-run-row]').first().getAttribute('data-run-row');
  assert.equal(await page.locator('[data-action="older"]').isEnabled(), true);
  await page.locator('[data-action="older"]').click();
  await page.waitForFunction((first) => document.querySelector('[data-run-row]')?.getAttribute('data-run-row') !== first, newest);
  assert.equal(await page.locator('[data-run-row]').count(), 50);
  assert.equal(Number(await page.locator('[data-run-row]').first().getAttribute('data-run-row')), Number(newest) - 50);
  await page.locator('#runs-status').selectOption('failed');
  await page.waitForFunction(() => [...document.querySelectorAll('[data-run-row] [data-status]')].every((s) => s.getAttribute('data-status') === 'failed'));
  await shot('runs-1000');

  // Figures for /work/notes/dispatch-ui-bench.md: what the page and the core hold.
  const cdp = await browser.context.newCDPSession(page);
  await cdp.send('Performance.enable');
  await cdp.send('HeapProfiler.collectGarbage');
  const elements = await page.evaluate(() => document.querySelectorAll('*').length);
  const { metrics } = await cdp.send('Performance.getMetrics');
  const m = Object.fromEntries(metrics.map((x) => [x.name, x.value]));
  const pid = Number(/StatusNotifierItem-(\d+)-/.exec(app.tray().name)?.[1]);
  const rss = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+) kB/)?.[1];
  console.log(`bench: 1000 runs, Runs view: ${elements} elements (${m.Nodes} DOM nodes after GC), JS heap used ${(m.JSHeapUsedSize / 1048576).toFixed(1)} MiB; airlock-desktop-dev (core + GTK webview on the landing page) RSS ${(Number(rss) / 1024).toFixed(1)} MiB`);
  assert.ok(elements < 2000, `the Runs view holds ${elements} elements`);
});

test('Browse opens the system directory picker in the app window, and what is chosen fills the field', async () => {
  // The picker is a GTK dialog of the app (it needs the window's Wails context): the
  // browser asks through the façade, the dialog appears on the app's display.
  const pid = Number(/StatusNotifierItem-(\d+)-/.exec(app.tray().name)?.[1]);
  const display = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').find((e) => e.startsWith('DISPLAY='))?.slice(8);
  assert.ok(display, 'the app has no DISPLAY');
  const xenv = { ...process.env, DISPLAY: display };
  // xwininfo walks the whole tree; a window destroyed during the walk (GTK's own
  // short-lived ones) fails it with BadWindow, so a failed walk is taken again.
  const dialogs = () => {
    for (let attempt = 1; ; attempt++) {
      try {
        return execFileSync('xwininfo', ['-display', display, '-root', '-tree'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
          .split('\n').filter((l) => l.includes('"Where the task runs"'));
      } catch (err) {
        if (attempt >= 10) throw err;
        execFileSync('sleep', ['0.05']);
      }
    }
  };
  async function waitDialogs(n, what) {
    const deadline = Date.now() + 20_000;
    while (dialogs().length !== n) {
      assert.ok(Date.now() < deadline, what);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  // No window manager under Xvfb: give the dialog the focus, then press keys (XTEST;
  // GTK ignores synthetic events sent to a window).
  const keys = (...args) => {
    const id = /^\s*(0x[0-9a-f]+)/.exec(dialogs()[0])?.[1];
    execFileSync('xdotool', ['windowfocus', '--sync', id, ...args], { env: xenv });
  };

  await tasksTab();
  await page.locator('[data-action="new-task"]').first().click();
  await page.locator('#task-cwd').fill(work);
  assert.equal(dialogs().length, 0);

  // Cancel: Escape closes it and the field keeps what was typed.
  await page.locator('[data-action="browse"]').click();
  await waitDialogs(1, 'no directory picker appeared on the app display');
  keys('key', 'Escape');
  await waitDialogs(0, 'the picker did not close on Escape');
  assert.equal(await page.locator('#task-cwd').inputValue(), work);

  // Choose: type a path in the location bar and press Enter.
  const chosen = join(work, 'picked');
  mkdirSync(chosen);
  await page.locator('[data-action="browse"]').click();
  await waitDialogs(1, 'no directory picker appeared the second time');
  keys('key', 'ctrl+l');
  keys('type', '--delay', '20', chosen + '/');
  keys('key', 'Return');
  await waitDialogs(0, 'the picker did not close on Enter');
  await page.waitForFunction((want) => document.querySelector('#task-cwd')?.value === want, chosen, { timeout: 10_000 });
  await page.getByRole('button', { name: 'Cancel' }).click();
});

test('a department whose directory disappears shows as missing, live, and is removed after a confirmation', async () => {
  const dir = join(work, 'soon-gone');
  mkdirSync(dir);
  // Over the API a department in a new place needs proof of a person; the window is one.
  const refused = await app.api('POST', '/v1/departments', { name: 'e2e-soon-gone', dir, defaults: {} });
  assert.equal(refused.status, 403, JSON.stringify(refused.body));
  assert.match(refused.body.hint ?? JSON.stringify(refused.body), /window/);
  await page.evaluate(([d]) => window.go.desktop.Facade.AddDepartment('e2e-soon-gone', d, {}), [dir]);
  await go('#/departments');
  const row = page.locator('[data-department="e2e-soon-gone"]');
  await row.waitFor({ timeout: 10_000 });
  assert.equal(await row.getAttribute('data-status'), 'ok');
  rmSync(dir, { recursive: true });
  // The core watches department directories (fsnotify) and publishes department.updated.
  await page.locator('[data-department="e2e-soon-gone"][data-status="missing"]').waitFor({ timeout: 45_000 });
  assert.match(await row.getByTestId('dept-missing').textContent(), /directory missing/);
  assert.match(await row.textContent(), /wait under Waiting for you/);
  await row.locator('[data-action="remove"]').click();
  assert.match(await row.textContent(), /The directory and its files stay/);
  await row.locator('[data-action="confirm-remove"]').click();
  await row.waitFor({ state: 'detached', timeout: 10_000 });
  assert.equal((await app.api('GET', '/v1/departments/e2e-soon-gone')).status, 404);
});

test('an agent task is created in the editor: the agent, its prompt and model are stored and listed', async () => {
  await tasksTab();
  await page.locator('[data-action="new-task"]').first().click();
  await page.locator('#task-name').fill('e2e-agent');
  await page.locator('#task-runs').selectOption('claude');
  assert.equal(await page.locator('#task-command').count(), 0, 'the command field is still shown for an agent');
  await page.locator('#task-prompt').fill('Tidy the build directory.\nThen stop.');
  await page.locator('#task-model').fill('claude-test');
  await page.locator('#task-cwd').fill(work);
  await page.locator('#task-schedule').fill('');
  // A bad API base is the core's error, shown by the agent's fields.
  await page.locator('#task-apibase').fill('api.anthropic.com');
  await page.locator('[data-action="save-task"]').click();
  const err = page.locator('[data-field-error="apiBase"]');
  await err.waitFor({ timeout: 10_000 });
  assert.match(await err.textContent(), /not an http\(s\) URL/);
  await page.locator('#task-apibase').fill('');
  await shot('editor-agent');
  await page.locator('[data-action="save-task"]').click();
  const row = page.locator('[data-task="e2e-agent"]');
  await row.waitFor({ timeout: 10_000 });
  assert.match(await row.getByTestId('task-runs').textContent(), /Claude Code \(claude-test\) on "Tidy the build directory\."/);
  const created = await app.api('GET', '/v1/tasks/e2e-agent');
  assert.equal(created.status, 200, JSON.stringify(created.body));
  assert.deepEqual(created.body.argv, ['claude']);
  assert.deepEqual(created.body.agent, {
    kind: 'claude',
    prompt: 'Tidy the build directory.\nThen stop.',
    model: 'claude-test',
    api_base: 'https://api.anthropic.com',
    api_key_secret: 'ANTHROPIC_API_KEY',
  });
  // Opened again, the editor shows the agent, not a command.
  await row.locator('[data-action="edit"]').click();
  await page.locator('#task-prompt').waitFor({ timeout: 10_000 });
  assert.equal(await page.locator('#task-runs').inputValue(), 'claude');
  assert.equal(await page.locator('#task-prompt').inputValue(), 'Tidy the build directory.\nThen stop.');
  await page.getByRole('button', { name: 'Cancel' }).click();

  // Its run shows the agent (here it waits for its directory, outside the known places).
  const started = await app.api('POST', '/v1/tasks/e2e-agent/run-now', {});
  assert.equal(started.status, 200, JSON.stringify(started.body));
  await go('#/dispatch');
  await page.locator('[data-tab="runs"]').click();
  await page.locator('#runs-task').selectOption('e2e-agent');
  const runRow = page.locator(`[data-run-row="${started.body.id}"]`);
  await runRow.waitFor({ timeout: 20_000 });
  await runRow.click();
  const agentLine = page.getByTestId('run-agent');
  await agentLine.waitFor({ timeout: 10_000 });
  assert.match(await agentLine.textContent(), /Agent task: Claude Code \(claude-test\) on "Tidy the build directory\."/);
  await shot('run-agent');
});
