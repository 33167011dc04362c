import { Counter, Histogram } from 'prom-client';

/**
 * prom-client's labelled children re-validate and re-hash their labels on every inc and observe (its
 * `labels()` only binds them): a request's counter and histogram cost it a few µs of CPU. These handles
 * find their series once and update it in place, as prom-client's own inc and observe would (same
 * bucket rule, same sums); the export stays prom-client's. They read prom-client's series table
 * (`hashMap`, undocumented): fast-series.spec.ts compares their scrape with prom-client's own calls,
 * so an upgrade that changes it fails there. A series emptied by `reset()` is made again on next use.
 */
type Labels = Record<string, string>;

interface SeriesTable<T> {
  hashMap: Record<string, T>;
}

interface HistogramSeries {
  labels: Labels;
  bucketValues: Record<string, number>;
  sum: number;
  count: number;
}

interface CounterSeries {
  labels: Labels;
  value: number;
}

export interface CountHandle {
  inc(): void;
}

export interface ObserveHandle {
  observe(value: number): void;
}

/**
 * prom-client's series table of `metric`, read where it is at each use (`reset()` replaces it); a
 * prom-client without one fails here, at the handle's creation.
 */
function tableOf<T>(metric: Counter | Histogram): SeriesTable<T> {
  const read = (): Record<string, T> => {
    const map: unknown = Reflect.get(metric, 'hashMap');
    if (typeof map !== 'object' || map === null) throw new Error('prom-client keeps no series table (hashMap)');
    return map as Record<string, T>;
  };
  read();
  return {
    get hashMap() {
      return read();
    },
  };
}

/** The key prom-client filed `labels` under (found by identity: it keeps the object it was given). */
function keyOf<T extends { labels: Labels }>(table: SeriesTable<T>, labels: Labels): string {
  for (const key in table.hashMap) if (table.hashMap[key].labels === labels) return key;
  throw new Error(`prom-client did not file the series ${JSON.stringify(labels)} as fast-series expects`);
}

export function counterHandle(counter: Counter, labels: Labels): CountHandle {
  const table = tableOf<CounterSeries>(counter);
  const made = () => {
    counter.inc(labels, 0);
    return keyOf(table, labels);
  };
  let key = made();
  return {
    inc() {
      const series = table.hashMap[key] ?? table.hashMap[(key = made())];
      series.value += 1;
    },
  };
}

export function histogramHandle(histogram: Histogram, labels: Labels, upperBounds: readonly number[]): ObserveHandle {
  const table = tableOf<HistogramSeries>(histogram);
  const made = () => {
    histogram.zero(labels);
    return keyOf(table, labels);
  };
  let key = made();
  // prom-client files a bucket under its bound as a property name: made once here, not from the number on every observe.
  const bucketKeys = upperBounds.map(String);
  return {
    observe(value: number) {
      if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
      const series = table.hashMap[key] ?? table.hashMap[(key = made())];
      series.sum += value;
      series.count += 1;
      // prom-client's bucket: the first bound at or above the value; above every bound only +Inf counts it.
      // Indexed, as every per-request loop here: an unoptimised for-of allocates an iterator result per step.
      for (let i = 0; i < upperBounds.length; i++) {
        if (value <= upperBounds[i]) {
          series.bucketValues[bucketKeys[i]] += 1;
          return;
        }
      }
    },
  };
}
