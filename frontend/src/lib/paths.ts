// How the window shows paths (UI.md): ~ for the home directory, middle-truncated so
// the start and the file name stay readable; the full path goes on hover.

/** tildePath replaces the home directory at the start of path with ~. */
export function tildePath(path: string, home: string): string {
  if (!home || home === '/') return path;
  const h = home.endsWith('/') ? home.slice(0, -1) : home;
  if (path === h) return '~';
  if (path.startsWith(h + '/')) return '~' + path.slice(h.length);
  return path;
}

const ELLIPSIS = '…';

/**
 * middleTruncate shortens path to at most max characters by replacing whole
 * directories in the middle with …, keeping the first directory and as many of the last
 * ones as fit (the file name first). A last segment longer than max is cut in its middle.
 */
export function middleTruncate(path: string, max: number): string {
  const chars = Array.from(path);
  if (chars.length <= max) return path;
  if (max < 3) return chars.slice(0, max).join('');

  const absolute = path.startsWith('/');
  const segments = path.split('/').filter((s, i) => s !== '' || i === 0);
  // "/a/b/c" → ["", "a", "b", "c"]; "~/a/b" → ["~", "a", "b"].
  if (segments.length >= 3) {
    const head = absolute ? '/' + (segments[1] ?? '') : (segments[0] ?? '');
    const firstTail = absolute ? 2 : 1;
    const tail: string[] = [];
    for (let i = segments.length - 1; i >= firstTail; i--) {
      const candidate = [segments[i] ?? '', ...tail];
      const text = `${head}/${ELLIPSIS}/${candidate.join('/')}`;
      if (Array.from(text).length > max) break;
      tail.unshift(segments[i] ?? '');
    }
    if (tail.length > 0) return `${head}/${ELLIPSIS}/${tail.join('/')}`;
    const last = segments[segments.length - 1] ?? '';
    const room = max - Array.from(`${ELLIPSIS}/`).length;
    if (room >= 3) return `${ELLIPSIS}/${cutMiddle(last, room)}`;
  }
  return cutMiddle(path, max);
}

function cutMiddle(text: string, max: number): string {
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  const keep = max - 1;
  const front = Math.ceil(keep / 2);
  const back = keep - front;
  return chars.slice(0, front).join('') + ELLIPSIS + (back > 0 ? chars.slice(-back).join('') : '');
}

/** displayPath is tildePath then middleTruncate. */
export function displayPath(path: string, home: string, max = 48): string {
  return middleTruncate(tildePath(path, home), max);
}
