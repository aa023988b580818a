// One way a page keeps what it shows current: read it on mount, and again on the core's
// events that change it, after an event gap and when a task is removed; reads asked for
// while one runs coalesce into one more. Nothing polls.
import { onDestroy, onMount } from 'svelte';
import { events, type Topic } from './events';
import { coalesce } from './inbox';
import { errorText } from './errors';
import { onTaskRemoved } from './api-dispatch';

export interface Reloader {
  /** refresh reads again (coalesced with a read already running). */
  refresh: () => Promise<void>;
  /** loaded is true once the first read has ended, well or not. */
  readonly loaded: boolean;
  /** error is the last read's failure in words, "" after a good read. */
  readonly error: string;
}

/** reloader runs load now (on mount) and on each of topics; call it while a component initialises. */
export function reloader(load: () => Promise<void>, topics: readonly Topic[]): Reloader {
  let loaded = $state(false);
  let error = $state('');
  const refresh = coalesce(async () => {
    try {
      await load();
      error = '';
    } catch (err) {
      error = errorText(err);
    } finally {
      loaded = true;
    }
  });
  const offs = [...topics.map((t) => events.on(t, () => void refresh())), events.onGap(() => void refresh()), onTaskRemoved(() => void refresh())];
  onDestroy(() => offs.forEach((off) => off()));
  onMount(() => void refresh());
  return {
    refresh,
    get loaded() {
      return loaded;
    },
    get error() {
      return error;
    },
  };
}

/** A run's part as runReader reads it. */
export interface RunPart<T> {
  /** value is the last good read; undefined until the first. */
  readonly value: T | undefined;
  /** error is the last read's failure in words, "" after a good read. */
  readonly error: string;
}

/**
 * runReader reads a part of a run (its network, its decisions) now, again whenever the
 * run's status changes and, while it is live, every few seconds: what it records arrives
 * with no change of status and no event of its own. Call it while a component initialises.
 */
export function runReader<T>(load: () => Promise<T>, run: () => { status: string; live: boolean }): RunPart<T> {
  let value: T | undefined = $state();
  let error = $state('');
  const refresh = coalesce(async () => {
    try {
      value = await load();
      error = '';
    } catch (err) {
      error = errorText(err);
    }
  });
  $effect(() => {
    void run().status;
    void refresh();
  });
  $effect(() => {
    if (!run().live) return;
    const timer = setInterval(() => void refresh(), 3000);
    return () => clearInterval(timer);
  });
  return {
    get value() {
      return value;
    },
    get error() {
      return error;
    },
  };
}
