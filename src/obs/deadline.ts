/**
 * A wait for an answer, bounded: `work`'s result, or `onLate()`'s once `ms` have passed (a throw
 * from `onLate` rejects). Probes and checks use it where a client's own timeout is longer than a
 * person or an orchestrator waits, or missing (a Redis that accepts the connection and never
 * answers), so they never hang. The timer is cleared either way and never keeps the process alive.
 */
export async function answerWithin<T>(work: Promise<T>, ms: number, onLate: () => T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(onLate());
      } catch (err) {
        reject(err);
      }
    }, ms);
    timer.unref();
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
