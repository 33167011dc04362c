import { TIMEOUT_MESSAGE } from '../common/redis-errors';

/**
 * Rejects with "Command timed out" when `pending` has not settled within `timeoutMs` of time this
 * process could spend waiting for it. A timer that fires late means the event loop was stalled (a long
 * synchronous task, a GC pause): the reply may be sitting unread in the socket, because Node runs
 * expired timers before it reads sockets. Such a deadline is extended once by `timeoutMs`, so the
 * reply is read first and a slow event loop is not mistaken for an unreachable Redis.
 */
export function withDeadline<T>(pending: Promise<T>, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let armedAtMs = performance.now();
    let extended = false;
    const expire = () => {
      const lateMs = performance.now() - armedAtMs - timeoutMs;
      if (!extended && lateMs > timeoutMs / 2) {
        extended = true;
        armedAtMs = performance.now();
        timer = setTimeout(expire, timeoutMs);
        return;
      }
      reject(new Error(TIMEOUT_MESSAGE));
    };
    let timer = setTimeout(expire, timeoutMs);
    pending.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
