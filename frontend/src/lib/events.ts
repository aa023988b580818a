// The one place the window subscribes to the core's events. The topics and the types
// of their payloads are generated from Go (wire.gen.ts, written by
// `go run ./api/internal/tsgen` from api/events.go; a Go test fails when it is stale), so
// a handler that reads a field Go does not send fails svelte-check. The Go side
// (app/desktop/forward.go) re-emits every bus event under its topic with (payload, meta)
// as arguments. Payloads say what changed; a view re-reads what it shows.
import { EventsOnMultiple } from '../../wailsjs/runtime/runtime';
import { Topics, type Payloads } from './wire.gen';

export { Topics };
export type { Payloads };

/** A topic the core publishes. */
export type Topic = (typeof Topics)[keyof typeof Topics];

/** Every topic, in declaration order. */
export const allTopics: readonly Topic[] = Object.values(Topics);

/** Sent with every event: seq grows by one per event, so a gap means some were missed. */
export interface EventMeta {
  seq: number;
  time: string;
}

export type PayloadOf<T extends Topic> = Payloads[T];

export type Handler<T extends Topic> = (payload: PayloadOf<T>, meta: EventMeta | undefined) => void;

/** Subscribes to events through a source (the Wails runtime by default). */
export type Source = (topic: string, callback: (...data: unknown[]) => void) => () => void;

const wailsSource: Source = (topic, callback) => EventsOnMultiple(topic, callback, -1);

/** The window's own event (not a core topic): the tray's "Review…" asks for the popup on one request. */
export const ReviewEvent = 'window.review';

/** onReview calls back with the request id when the tray asks the window to review it. */
export function onReview(callback: (id: string) => void, source: Source = wailsSource): () => void {
  return source(ReviewEvent, (id) => {
    if (typeof id === 'string' && id !== '') callback(id);
  });
}

/**
 * The window's own event (not a core topic): a notification or a tray line asks the
 * window to open one place, a route such as "#/dispatch/runs/12" (app/desktop NavigateEvent).
 */
export const NavigateEvent = 'window.navigate';

/** onNavigate calls back with the route ("#/…") a notification or the tray asks to open. */
export function onNavigate(callback: (route: string) => void, source: Source = wailsSource): () => void {
  return source(NavigateEvent, (route) => {
    if (typeof route === 'string' && route.startsWith('#/')) callback(route);
  });
}

/** isTopic tells whether name is one of the core's topics. */
export function isTopic(name: string): name is Topic {
  return (allTopics as readonly string[]).includes(name);
}

function asMeta(v: unknown): EventMeta | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const m = v as Record<string, unknown>;
  return typeof m.seq === 'number' && typeof m.time === 'string' ? { seq: m.seq, time: m.time } : undefined;
}

/**
 * EventStream delivers the core's events to handlers and notices lost ones: the bus
 * drops events for a subscriber that falls behind, and a gap in seq tells the window to
 * re-fetch what it shows (onGap).
 */
export class EventStream {
  private lastSeq = 0;
  private readonly gapHandlers = new Set<(missed: number) => void>();

  constructor(private readonly source: Source = wailsSource) {}

  /** on calls handler for each event of topic until the returned function is called. */
  on<T extends Topic>(topic: T, handler: Handler<T>): () => void {
    return this.source(topic, (...data: unknown[]) => {
      const meta = asMeta(data[1]);
      if (meta) this.track(meta.seq);
      handler(data[0] as PayloadOf<T>, meta);
    });
  }

  /** onGap calls handler with the number of events missed whenever seq jumps. */
  onGap(handler: (missed: number) => void): () => void {
    this.gapHandlers.add(handler);
    return () => this.gapHandlers.delete(handler);
  }

  private track(seq: number): void {
    // Several handlers may see the same event; only a forward jump is a gap.
    if (this.lastSeq > 0 && seq > this.lastSeq + 1) {
      const missed = seq - this.lastSeq - 1;
      for (const h of this.gapHandlers) h(missed);
    }
    if (seq > this.lastSeq) this.lastSeq = seq;
  }
}

/** events is the window's one stream of the core's events. */
export const events = new EventStream();
