import { useSingleNodeApp } from '../support/e2e';

/**
 * OTEL_TRACES_EXPORTER=console, as `OTEL_TRACES_EXPORTER=console npm start` runs it: the boot line
 * says where traces go, and a request's span tree, its Redis call under it, is printed to standard
 * output. Its own file: one traced app per process.
 */
describe('traces on the console (OTEL_TRACES_EXPORTER=console)', () => {
  const printed: string[] = [];
  const realWrite = process.stdout.write.bind(process.stdout);
  beforeAll(() => {
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
      printed.push(String(chunk));
      return realWrite(chunk, ...rest);
    }) as typeof process.stdout.write;
  });
  afterAll(() => {
    process.stdout.write = realWrite;
  });

  const e2e = useSingleNodeApp({
    boards: ['b'],
    env: { OTEL_TRACES_EXPORTER: 'console', OTEL_SERVICE_NAME: 'trendboard-console-test', LOG_LEVEL: 'info' },
  });

  it('says at boot where traces go', () => {
    const boot = printed
      .join('')
      .split('\n')
      .find((line) => line.includes('traces to'));
    expect(boot).toContain(
      'traces to standard output (OTEL_TRACES_EXPORTER=console: a tree per trace): service trendboard-console-test',
    );
  });

  it('prints a top read as a tree: the request, its Redis call indented under it', async () => {
    printed.length = 0;
    await e2e.http().get('/boards/b/top?limit=3').expect(200);
    const lines = printed.join('').split('\n');
    const start = lines.findIndex((line) => line.startsWith('  GET /boards/:board/top '));
    expect(start).toBeGreaterThan(0);
    expect(lines[start - 1]).toMatch(/^trace [0-9a-f]{32}$/);
    expect(lines[start]).toMatch(
      /^ {2}GET \/boards\/:board\/top {2}\d+\.\d{2} ms {2}\[span [0-9a-f]{16}\] .*http\.response\.status_code=200/,
    );
    expect(lines[start + 1]).toMatch(
      /^ {4}tbRankReadTop {2}\d+\.\d{2} ms {2}\[span [0-9a-f]{16}\] db\.system\.name=redis/,
    );
  });
});
