// One action at a time on a component (an answer, an authorization): its buttons are
// disabled while it runs, and its failure is shown in words until the next try.
import { errorText } from './errors';

/** Busy tracks the action running on a component and the last one's failure. */
export interface Busy {
  /** busy is true while an action runs. */
  readonly busy: boolean;
  /** error is the last action's failure in words, "" when it went well. */
  error: string;
  /**
   * run runs fn, busy meanwhile, and hands its result to done (in the same turn, so the
   * component shows both at once); a failure of either becomes error rather than a
   * rejection.
   */
  run<T>(fn: () => Promise<T>, done?: (result: T) => void): Promise<void>;
}

/** busyState is a fresh Busy, reactive for the component's template. */
export function busyState(): Busy {
  let busy = $state(false);
  let error = $state('');
  return {
    get busy() {
      return busy;
    },
    get error() {
      return error;
    },
    set error(v: string) {
      error = v;
    },
    async run<T>(fn: () => Promise<T>, done?: (result: T) => void): Promise<void> {
      busy = true;
      error = '';
      try {
        const result = await fn();
        done?.(result);
      } catch (err) {
        error = errorText(err);
      } finally {
        busy = false;
      }
    },
  };
}
