// Per-command context: a deadline and the tabs the command depends on. Handlers never have to poll
// for these; `cancelled` rejects as soon as the deadline passes or a watched tab closes, and the
// dispatcher races the handler against it so every request gets exactly one, timely reply.

import { Code, ShotError } from './errors.js';
import { onTabRemoved } from './tabs.js';

export class CommandContext {
  /**
   * @param {string} cmd
   * @param {Record<string, any>} args as lib/args.js read them (timeout_ms defaulted and bounded)
   * @param {(data: object) => void} [partial] sends part of the result ahead of the reply
   */
  constructor(cmd, args, partial = () => {}) {
    this.cmd = cmd;
    this.args = args;
    /** Part of the result, sent ahead of the reply (which still comes, exactly once). */
    this.partial = partial;
    /** @type {number} */
    this.timeoutMs = args.timeout_ms;
    /** @type {Set<number>} */
    this.watched = new Set();
    this.done = false;
    /** What the handler is waiting for; named in the timeout message. */
    this.step = '';
    this.started = performance.now();
    /** @type {(e: Error) => void} */
    let reject = () => {};
    /** @type {Promise<never>} */
    this.cancelled = new Promise((_, rej) => {
      reject = rej;
    });
    this.cancelled.catch(() => {}); // observed by the dispatcher; avoid unhandled-rejection noise
    this.cancel = reject;
    this.timer = setTimeout(
      () => reject(new ShotError(Code.TIMEOUT,
        `${cmd} did not finish within ${this.timeoutMs} ms` + (this.step ? ` (was at: ${this.step})` : ''))),
      this.timeoutMs,
    );
    this.unsubscribe = onTabRemoved((tabId) => {
      if (this.watched.has(tabId)) reject(new ShotError(Code.TAB_CLOSED, `Tab ${tabId} was closed during ${cmd}.`));
    });
  }

  /** Fail this command with tab_closed if `tabId` closes before it finishes. */
  watchTab(/** @type {number} */ tabId) {
    this.watched.add(tabId);
  }

  /** ms left before the deadline (for steps that take their own timeout). */
  remainingMs() {
    return this.timeoutMs - (performance.now() - this.started);
  }

  /**
   * Race `promise` against cancellation (used inside handlers so cleanup code runs on time).
   * @template T
   * @param {Promise<T>} promise
   * @returns {Promise<T>}
   */
  guard(promise) {
    return Promise.race([promise, this.cancelled]);
  }

  finish() {
    this.done = true;
    clearTimeout(this.timer);
    this.unsubscribe();
  }
}
