import { Counter, Histogram, Registry } from 'prom-client';
import { counterHandle, histogramHandle } from './fast-series';

const BUCKETS = [0.001, 0.01, 0.1, 1];
/** Values on, between, below and above the bounds. */
const VALUES = [0, 0.0005, 0.001, 0.002, 0.01, 0.05, 0.1, 0.5, 1, 3, 120];

/** A registry holding one counter and one histogram, as PrometheusService declares them. */
function metrics() {
  const registry = new Registry();
  const labelNames = ['method', 'route'];
  const counter = new Counter({ name: 'c_total', help: 'c', labelNames, registers: [registry] });
  const histogram = new Histogram({
    name: 'h_seconds',
    help: 'h',
    labelNames,
    buckets: BUCKETS,
    registers: [registry],
  });
  return { registry, counter, histogram };
}

describe('fast-series handles', () => {
  it("scrape exactly as prom-client's own labelled inc and observe, series by series", async () => {
    const own = metrics();
    const fast = metrics();
    const series = [
      { method: 'POST', route: '/a' },
      { method: 'GET', route: '/b' },
    ];
    const handles = series.map((labels) => ({
      count: counterHandle(fast.counter, { ...labels }),
      time: histogramHandle(fast.histogram, { ...labels }, BUCKETS),
    }));
    for (const [i, labels] of series.entries())
      for (const value of VALUES.slice(i)) {
        own.counter.labels(labels).inc();
        own.histogram.labels(labels).observe(value);
        handles[i].count.inc();
        handles[i].time.observe(value);
      }
    expect(await fast.registry.metrics()).toBe(await own.registry.metrics());
    expect(await fast.registry.getMetricsAsJSON()).toEqual(await own.registry.getMetricsAsJSON());
  });

  it('keep counting after the registry is reset, as a new series', async () => {
    const own = metrics();
    const fast = metrics();
    const count = counterHandle(fast.counter, { method: 'GET', route: '/' });
    const time = histogramHandle(fast.histogram, { method: 'GET', route: '/' }, BUCKETS);
    count.inc();
    time.observe(0.5);
    fast.registry.resetMetrics();
    count.inc();
    time.observe(0.002);
    own.counter.labels({ method: 'GET', route: '/' }).inc();
    own.histogram.labels({ method: 'GET', route: '/' }).observe(0.002);
    expect(await fast.registry.metrics()).toBe(await own.registry.metrics());
  });

  it('refuse a value that is not a finite number, as prom-client does', () => {
    const time = histogramHandle(metrics().histogram, { method: 'GET', route: '/' }, BUCKETS);
    expect(() => time.observe(Number.NaN)).toThrow(TypeError);
  });
});
