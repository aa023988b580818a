// The window's pages and the hash route that names each one, so a page
// can be opened directly (#/settings) by the e2e tests and the screenshot script.

export const pages = [
  { id: 'waiting', title: 'Waiting for you' },
  { id: 'dispatch', title: 'Dispatch' },
  { id: 'departments', title: 'Departments' },
  { id: 'ops', title: 'Ops' },
  { id: 'settings', title: 'Settings' },
] as const;

export type PageId = (typeof pages)[number]['id'];

/** pageFromHash reads "#/settings" as "settings"; anything else opens the landing page. */
export function pageFromHash(hash: string): PageId {
  const id = hash.replace(/^#\/?/, '').split(/[/?]/)[0] ?? '';
  const found = pages.find((p) => p.id === id);
  return found ? found.id : 'waiting';
}

/** hashFor is the hash of a page. */
export function hashFor(id: PageId): string {
  return `#/${id}`;
}

/** What a Dispatch route opens: the tasks, the runs (maybe filtered by a status group), or one run. */
export type DispatchRoute = { kind: 'tasks' } | { kind: 'runs'; status: string } | { kind: 'run'; id: number };

/**
 * dispatchRoute reads the part of a Dispatch hash after the page: "#/dispatch/runs/12"
 * is run 12, "#/dispatch/runs?status=failed" the failed runs (the routes notifications
 * and the tray open); anything else the tasks.
 */
export function dispatchRoute(hash: string): DispatchRoute {
  const m = /^#\/?dispatch\/runs(?:\/(\d+))?\/?(?:\?(.*))?$/.exec(hash);
  if (!m) return { kind: 'tasks' };
  if (m[1]) return { kind: 'run', id: Number(m[1]) };
  return { kind: 'runs', status: new URLSearchParams(m[2] ?? '').get('status') ?? '' };
}
