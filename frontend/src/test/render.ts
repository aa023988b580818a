// What the component tests share: mounting a component into the document, unmounting
// everything after each test, clicking, and letting pending work finish.
import { flushSync, mount, tick, unmount } from 'svelte';

let mounted: Record<string, unknown>[] = [];

/** render mounts component with props into a fresh element of the document and returns it. */
export function render<P extends Record<string, unknown>>(component: unknown, props: P): HTMLElement {
  const target = document.createElement('div');
  document.body.appendChild(target);
  mounted.push(mount(component as never, { target, props }));
  flushSync();
  return target;
}

/** unmountAll unmounts what render mounted and empties the document: call it in afterEach. */
export function unmountAll(): void {
  for (const m of mounted) unmount(m);
  mounted = [];
  document.body.innerHTML = '';
}

/** click clicks el, which must be there, and applies what it changed. */
export function click(el: Element | null | undefined): void {
  if (!el) throw new Error('nothing to click');
  (el as HTMLElement).click();
  flushSync();
}

/** settle lets pending promises, timers of 0 ms and effects finish (an answer under way, a load). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await new Promise((r) => setTimeout(r, 0));
    await tick();
  }
  flushSync();
}
