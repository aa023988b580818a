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
