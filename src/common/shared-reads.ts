import type { Context } from '@opentelemetry/api';
import { currentContext, traceBatch } from '../tracing/tracing';

interface Gathering<T> {
  answer: Promise<T>;
  /** The trace context of every request that joined, when tracing: a run shared by several links to each. */
  traced: Array<Context | undefined>;
}

/**
 * Identical reads asked in one event-loop turn share one run. The first read of a key opens a
 * gathering that starts its run at the end of the turn (setImmediate: after the sockets the turn
 * polled have all been read); every read of that key asked before then joins it and gets the same
 * answer (the same object: callers must not change it). A read asked once the run has started opens a
 * new gathering, never joins a run under way.
 *
 * Why that keeps reads exact and read-your-writes across instances: the run starts after every read
 * it answers was asked, and takes its time (the read's `nowMs`) when it starts, so each answer is the
 * board as it stood at a moment after its request arrived — what the same read sent alone a moment
 * later would answer. A write acknowledged before a read was asked (on any instance) is in Redis
 * before that read's run is sent. Sharing only saves work: one call to Redis, one reply decoded, one
 * answer built, however many clients asked.
 */
export class SharedReads<T> {
  private readonly gathering = new Map<string, Gathering<T>>();

  /** `read` runs once for every request of `key` asked in this turn; a lone request runs in its own trace context. */
  share(key: string, read: () => Promise<T>): Promise<T> {
    const joined = this.gathering.get(key);
    if (joined) {
      joined.traced.push(currentContext());
      return joined.answer;
    }
    const traced = [currentContext()];
    const answer = new Promise<T>((resolve, reject) => {
      setImmediate(() => {
        this.gathering.delete(key);
        const run = traced.length === 1 ? read() : traceBatch('shared read', traced, read);
        run.then(resolve, reject);
      });
    });
    this.gathering.set(key, { answer, traced });
    return answer;
  }

  /** Keys with a gathering not yet started. */
  get gatheringCount(): number {
    return this.gathering.size;
  }
}
