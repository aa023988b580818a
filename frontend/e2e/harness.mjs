// Starts the real desktop app for browser end-to-end tests (RECIPES.md, "Browser
// end-to-end against the real Go backend"): the `dev`-tag build serves the built
// frontend and Wails' WebSocket bridge, so headless Chromium drives the real Go façade
// and receives the real events. The app runs under its own Xvfb (it still opens its GTK
// window) and its own D-Bus session, with a private AIRLOCK_HOME.
import { spawn, execFileSync } from 'node:child_process';
import { request } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';

export const repoRoot = resolve(import.meta.dirname, '..', '..');
const appBinary = process.env.AIRLOCK_DESKTOP_DEV ?? join(repoRoot, 'build', 'bin', 'airlock-desktop-dev');
const assetDir = join(repoRoot, 'frontend', 'dist');
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';

// The private session bus the app runs on (shared with the Go tests and the scripts).
const busConfig = join(repoRoot, 'test', 'dbus-session.conf');

async function freePort() {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => ok(port));
    });
  });
}

function freeDisplay() {
  for (let n = 141; n < 190; n++) {
    if (!existsSync(`/tmp/.X11-unix/X${n}`) && !existsSync(`/tmp/.X${n}-lock`)) return n;
  }
  throw new Error('no free X display between :141 and :189');
}

async function until(what, timeoutMs, probe) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(100);
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** descendants lists the processes below pid with their names, depth first. */
function descendants(pid) {
  const out = [];
  for (const child of children(pid)) {
    let comm = '';
    try {
      comm = execFileSync('ps', ['-o', 'comm=', '-p', String(child)], { encoding: 'utf8' }).trim();
    } catch {
      continue; // already gone
    }
    out.push({ pid: child, comm }, ...descendants(child));
  }
  return out;
}

/** running is alive and not a zombie waiting to be reaped. */
function running(pid) {
  if (!alive(pid)) return false;
  try {
    return !execFileSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).trim().startsWith('Z');
  } catch {
    return false;
  }
}

function children(pid) {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .map((s) => Number(s.trim()))
      .filter((n) => n > 0);
  } catch {
    return [];
  }
}

/**
 * startApp starts Xvfb, then the dev build of airlock-desktop in a private D-Bus
 * session with a private AIRLOCK_HOME, and resolves when its page is served.
 * The returned object's stop() quits the app with SIGTERM and reports its exit code.
 * env adds to (or replaces in) the app's environment.
 */
export async function startApp({ timeoutMs = 90_000, tmp: reuse, env: extraEnv = {} } = {}) {
  if (!existsSync(appBinary)) {
    throw new Error(`${appBinary} is missing: run scripts/e2e.sh (it builds it), or go build -tags dev,webkit2_41 -o build/bin/airlock-desktop-dev .`);
  }
  if (!existsSync(join(assetDir, 'index.html'))) {
    throw new Error(`${assetDir}/index.html is missing: run npm run build in frontend/`);
  }
  // reuse: the directory of an app stopped with stop({ keep: true }), started again.
  const tmp = reuse ?? mkdtempSync(join(tmpdir(), 'airlock-e2e-'));
  const home = join(tmp, 'home');
  const log = [];
  const procs = [];
  const display = freeDisplay();
  const xvfb = spawn('Xvfb', [`:${display}`, '-screen', '0', '1280x800x24', '-nolisten', 'tcp'], { stdio: 'ignore' });
  procs.push(xvfb);
  await until(`Xvfb :${display}`, 20_000, () => existsSync(`/tmp/.X11-unix/X${display}`));

  for (const d of ['config', 'data', 'cache']) mkdirSync(join(tmp, 'xdg', d), { recursive: true });
  const port = await freePort();
  const env = {
    ...process.env,
    DISPLAY: `:${display}`,
    NO_AT_BRIDGE: '1',
    AIRLOCK_HOME: home,
    XDG_CONFIG_HOME: join(tmp, 'xdg', 'config'),
    XDG_DATA_HOME: join(tmp, 'xdg', 'data'),
    XDG_CACHE_HOME: join(tmp, 'xdg', 'cache'),
  };
  delete env.DBUS_SESSION_BUS_ADDRESS;
  delete env.XDG_RUNTIME_DIR;
  for (const k of Object.keys(env)) if (k.startsWith('AIRLOCK_') && k !== 'AIRLOCK_HOME') delete env[k];
  Object.assign(env, extraEnv); // a test's own (PATH without bwrap, say)
  const app = spawn(
    'dbus-run-session',
    // A fresh, unlocked gnome-keyring on the app's bus, its data under the app's
    // XDG_DATA_HOME (kept across a restart of the same directory): the real keyring,
    // where the core seals the configuration in force.
    [`--config-file=${busConfig}`, '--', 'bash', '-c', 'echo -n airlock-test | gnome-keyring-daemon --unlock --components=secrets >/dev/null && exec "$@"', 'bash',
      appBinary, '-devserver', `127.0.0.1:${port}`, '-assetdir', assetDir, '-loglevel', 'warning'],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  procs.push(app);
  app.stdout.on('data', (b) => log.push(String(b)));
  app.stderr.on('data', (b) => log.push(String(b)));
  const exited = new Promise((ok) => app.on('exit', (code, signal) => ok({ code, signal })));

  const url = `http://127.0.0.1:${port}/`;
  try {
    await until('the app to serve its page', timeoutMs, async () => {
      if (app.exitCode !== null) throw new Error(`the app exited early (${app.exitCode}):\n${log.join('')}`);
      try {
        const r = await fetch(`${url}wails/ipc.js`);
        return r.ok;
      } catch {
        return false;
      }
    });
  } catch (err) {
    killAll(procs);
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }

  return {
    url,
    tmp,
    home,
    configFile: join(home, 'config', 'config.toml'),
    log: () => log.join(''),
    writeConfig(text) {
      mkdirSync(join(home, 'config'), { recursive: true });
      writeFileSync(join(home, 'config', 'config.toml.tmp'), text);
      // Rename, as editors do: the watcher must see the new file either way.
      execFileSync('mv', ['-f', join(home, 'config', 'config.toml.tmp'), join(home, 'config', 'config.toml')]);
    },
    readConfig: () => readFileSync(join(home, 'config', 'config.toml'), 'utf8'),
    /**
     * tray returns the app's private session bus and its tray item's bus name, so a test
     * can act like a panel (gdbus calls on com.canonical.dbusmenu).
     */
    tray() {
      const appPid = descendants(app.pid).find((p) => p.comm.startsWith('airlock-deskto'))?.pid;
      if (!appPid) throw new Error('the app process is not running');
      const environ = readFileSync(`/proc/${appPid}/environ`, 'utf8').split('\0');
      const address = environ.find((e) => e.startsWith('DBUS_SESSION_BUS_ADDRESS='))?.slice('DBUS_SESSION_BUS_ADDRESS='.length);
      if (!address) throw new Error('the app has no session bus');
      return { address, name: `org.kde.StatusNotifierItem-${appPid}-1` };
    },
    /** api calls the app's local API over its unix socket, as the CLI does. */
    api: (method, path, body) => localAPI(join(home, 'run', 'airlock.sock'), method, path, body),
    /**
     * stop sends SIGTERM to the app and resolves with its exit code and the processes
     * of its tree (WebKit's, the bus daemon) still alive afterwards. keep leaves its
     * files, for startApp({ tmp }) to start Airlock again on them.
     */
    async stop({ keep = false } = {}) {
      const tree = descendants(app.pid);
      const appPid = tree.find((p) => p.comm.startsWith('airlock-deskto'))?.pid;
      if (appPid) process.kill(appPid, 'SIGTERM');
      const result = await Promise.race([exited, sleep(20_000).then(() => ({ code: null, signal: 'timeout' }))]);
      // The bus daemon and WebKit's helpers end a moment after the app: allow them 5 s.
      const settleBy = Date.now() + 5_000;
      while (tree.some((p) => running(p.pid)) && Date.now() < settleBy) await sleep(100);
      const left = tree.filter((p) => running(p.pid)).map((p) => `${p.pid}:${p.comm}`);
      for (const p of tree) if (running(p.pid)) process.kill(p.pid, 'SIGKILL');
      killAll(procs);
      if (!keep) rmSync(tmp, { recursive: true, force: true });
      return { ...result, left };
    },
  };
}

/** localAPI sends one JSON request over the unix socket and resolves with {status, body}. */
export function localAPI(socketPath, method, path, body) {
  return new Promise((ok, fail) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      { socketPath, method, path, headers: data ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) } : {} },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => {
          let parsed = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON: keep the text
          }
          ok({ status: res.statusCode, body: parsed });
        });
      },
    );
    req.on('error', fail);
    if (data) req.write(data);
    req.end();
  });
}

function killAll(procs) {
  for (const p of procs.reverse()) {
    if (p.pid && alive(p.pid) && p.exitCode === null) p.kill('SIGTERM');
  }
}

/** openBrowser launches headless Chromium outside the app's display and bus. */
export async function openBrowser() {
  const profile = mkdtempSync(join(tmpdir(), 'airlock-e2e-chromium-'));
  const env = { ...process.env, DBUS_SESSION_BUS_ADDRESS: 'disabled:' };
  delete env.DISPLAY;
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    env,
    viewport: { width: 1120, height: 740 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync'],
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * openWindow opens the app's window in a fresh headless Chromium at hash (say '#/ops'),
 * with the page's errors logged and the browser permissions asked for; it waits for the
 * Wails bridge, then for the heading named heading when one is given. It returns
 * { browser, page }.
 */
export async function openWindow(app, { hash = '', heading, permissions = [] } = {}) {
  const browser = await openBrowser();
  try {
    if (permissions.length > 0) await browser.context.grantPermissions(permissions);
    const page = await browser.context.newPage();
    page.on('pageerror', (err) => console.error('page error:', err));
    await page.goto(`${app.url}${hash}`);
    await page.waitForFunction(() => window.go && window.runtime, null, { timeout: 30_000 });
    if (heading) await page.getByRole('heading', { name: heading }).waitFor({ timeout: 15_000 });
    return { browser, page };
  } catch (err) {
    await browser.close();
    throw err;
  }
}

/**
 * screenshot saves the page to artifacts/e2e-NAME.png for review (not with
 * E2E_SCREENSHOTS=0); a failed picture never fails a test.
 */
export async function screenshot(page, name, { fullPage = false } = {}) {
  if (!page || process.env.E2E_SCREENSHOTS === '0') return;
  mkdirSync(join(repoRoot, 'artifacts'), { recursive: true });
  await page.screenshot({ path: join(repoRoot, 'artifacts', `e2e-${name}.png`), fullPage }).catch(() => {});
}

/** stopApp quits the app with SIGTERM and asserts it exits 0 and leaves nothing running. */
export async function stopApp(app, { keep = false } = {}) {
  if (!app) return;
  const { code, signal, left } = await app.stop({ keep });
  assert.equal(code, 0, `the app should quit cleanly on SIGTERM (exit ${code}, signal ${signal})\n${app.log()}`);
  assert.deepEqual(left, [], 'processes of the app left running after it quit');
}

/**
 * confirmConfig does what the person does when config.toml loosens the answer path: it
 * waits for the change Airlock holds for them and confirms it in the window (the
 * Settings banner's "Confirm this change" calls the same binding).
 */
export async function confirmConfig(page, timeoutMs = 20_000) {
  // The change may still be reloading (an editor's rename is seen as more than one
  // event): confirm the digest waiting now, again if it changed under the confirmation.
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await page.evaluate(async () => {
      const digest = (await window.go.desktop.Facade.ConfigView()).pending?.digest;
      if (!digest) return 'none';
      try {
        await window.go.desktop.Facade.ConfirmConfig(digest);
        return 'confirmed';
      } catch (err) {
        return `refused: ${err}`;
      }
    });
    if (result === 'confirmed') return;
    if (Date.now() > deadline) throw new Error(`no waiting change of config.toml was confirmed (last: ${result})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
