import { describe, expect, it, vi } from 'vitest';
import { EventStream, Topics, allTopics, isTopic, type Source } from './events';

// A fake Wails event source: emit(topic, ...data) calls the listeners of topic.
function fakeSource() {
  const listeners = new Map<string, Set<(...data: unknown[]) => void>>();
  const source: Source = (topic, cb) => {
    const set = listeners.get(topic) ?? new Set();
    set.add(cb);
    listeners.set(topic, set);
    return () => set.delete(cb);
  };
  const emit = (topic: string, ...data: unknown[]) => listeners.get(topic)?.forEach((cb) => cb(...data));
  return { source, emit };
}

describe('topics', () => {
  it('are dotted names, each once', () => {
    expect(new Set(allTopics).size).toBe(allTopics.length);
    for (const t of allTopics) expect(t).toMatch(/^[a-z]+(\.[a-z]+)+$/);
  });
  it('isTopic knows them', () => {
    expect(isTopic('config.changed')).toBe(true);
    expect(isTopic('config.change')).toBe(false);
  });
});

describe('EventStream', () => {
  it('hands the payload and meta to the topic handler only', () => {
    const { source, emit } = fakeSource();
    const stream = new EventStream(source);
    const onConfig = vi.fn();
    const onRun = vi.fn();
    stream.on(Topics.ConfigChanged, onConfig);
    stream.on(Topics.RunUpdated, onRun);
    emit('config.changed', { path: '/x' }, { seq: 1, time: '2026-11-29T12:00:00Z' });
    expect(onConfig).toHaveBeenCalledWith({ path: '/x' }, { seq: 1, time: '2026-11-29T12:00:00Z' });
    expect(onRun).not.toHaveBeenCalled();
  });

  it('stops after unsubscribing', () => {
    const { source, emit } = fakeSource();
    const stream = new EventStream(source);
    const h = vi.fn();
    const off = stream.on(Topics.RunLog, h);
    off();
    emit('run.log', 'line', { seq: 1, time: '' });
    expect(h).not.toHaveBeenCalled();
  });

  it('reports a gap in sequence numbers as missed events', () => {
    const { source, emit } = fakeSource();
    const stream = new EventStream(source);
    const gaps: number[] = [];
    stream.onGap((n) => gaps.push(n));
    stream.on(Topics.RunLog, () => {});
    stream.on(Topics.RunUpdated, () => {});
    emit('run.log', 'a', { seq: 5, time: '' }); // the first event sets the baseline
    emit('run.updated', {}, { seq: 6, time: '' });
    emit('run.log', 'b', { seq: 9, time: '' }); // 7 and 8 were dropped
    emit('run.log', 'c', { seq: 9, time: '' }); // same event seen twice: no gap
    expect(gaps).toEqual([2]);
  });

  it('copes with events without meta', () => {
    const { source, emit } = fakeSource();
    const stream = new EventStream(source);
    const h = vi.fn();
    stream.on(Topics.WindowShow, h);
    emit('window.show');
    expect(h).toHaveBeenCalledWith(undefined, undefined);
  });
});

describe('onReview', () => {
  it('passes the tray’s request id on, and ignores anything else', async () => {
    const { onReview, ReviewEvent } = await import('./events');
    let emit: (...data: unknown[]) => void = () => {};
    let topic = '';
    const off = onReview(
      (id) => got.push(id),
      (t, cb) => {
        topic = t;
        emit = cb;
        return () => {};
      },
    );
    const got: string[] = [];
    emit('req-1');
    emit(42);
    emit('');
    expect(topic).toBe(ReviewEvent);
    expect(got).toEqual(['req-1']);
    off();
  });
});

describe('onNavigate', () => {
  it('passes a route of the window on, and ignores anything else', async () => {
    const { onNavigate, NavigateEvent } = await import('./events');
    const { source, emit } = fakeSource();
    const got: string[] = [];
    const off = onNavigate((route) => got.push(route), source);
    for (const v of ['#/dispatch/runs/3', 'https://example.com', 7]) emit(NavigateEvent, v);
    expect(got).toEqual(['#/dispatch/runs/3']);
    off();
    emit(NavigateEvent, '#/waiting');
    expect(got).toEqual(['#/dispatch/runs/3']);
  });
});
