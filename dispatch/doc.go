// Package dispatch owns scheduled tasks, cron scheduling, the start gate, runs with
// their holds and releases, the executor, run logs and restart recovery.
package dispatch
