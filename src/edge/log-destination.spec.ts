import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { LOG_PENDING_MAX_BYTES } from './edge.limits';
import { TurnBatchedDestination } from './log-destination';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('TurnBatchedDestination', () => {
  let dir: string;
  const opened: TurnBatchedDestination[] = [];
  const fds: number[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tb-log-'));
  });

  afterEach(() => {
    for (const destination of opened.splice(0)) destination.close();
    for (const fd of fds.splice(0)) closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  });

  function destinationOn(fd: number): TurnBatchedDestination {
    const destination = new TurnBatchedDestination(fd);
    opened.push(destination);
    return destination;
  }

  function open(path: string, flags: number): number {
    const fd = openSync(path, flags);
    fds.push(fd);
    return fd;
  }

  it("writes a turn's lines at the end of the turn, whole and in order, as pino makes them", async () => {
    const path = join(dir, 'out.log');
    const destination = destinationOn(open(path, constants.O_WRONLY | constants.O_CREAT));
    const logger = pino({ level: 'info' }, destination);
    logger.info({ route: '/a', status: 200 }, 'request');
    logger.warn({ note: 'ünïcödé ✓' }, 'second');
    expect(readFileSync(path, 'utf8')).toBe('');
    await nextTurn();
    const lines = readFileSync(path, 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as pino.LogDescriptor);
    expect(lines.map(({ msg, route, note }) => [msg, route, note])).toEqual([
      ['request', '/a', undefined],
      ['second', undefined, 'ünïcödé ✓'],
    ]);
  });

  it('writes what is pending at once on flushSync, as the exit does', () => {
    const path = join(dir, 'out.log');
    const destination = destinationOn(open(path, constants.O_WRONLY | constants.O_CREAT));
    destination.write('{"msg":"one"}\n');
    destination.flushSync();
    expect(readFileSync(path, 'utf8')).toBe('{"msg":"one"}\n');
  });

  it("writes a line logged just before the process exits, in the exit's turn", () => {
    const script = [
      `const { TurnBatchedDestination } = require(${JSON.stringify(join(__dirname, 'log-destination'))});`,
      `require('pino')({}, new TurnBatchedDestination(1)).info('last words');`,
      'process.exit(3);',
    ].join('\n');
    const child = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', script], {
      encoding: 'utf8',
    });
    expect(child.status).toBe(3);
    expect(child.stdout).toContain('"msg":"last words"');
  });

  it('keeps the rest of a turn the pipe refused whole and first, though the next turns reuse its buffer', () => {
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const reader = open(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = open(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    const destination = destinationOn(writer);
    // The pipe (64 KiB) left with room for about half a turn: the first turn's write is cut short.
    const filler = 'f'.repeat(64 * 1024 - 1500);
    writeSync(writer, filler);
    const turn = (tag: string) =>
      Array.from({ length: 5 }, (_, i) => `${JSON.stringify({ turn: tag, i, pad: 'p'.repeat(500) })}\n`);
    const sent = [...turn('a'), ...turn('b'), ...turn('c')];
    for (const [i, line] of sent.entries()) {
      destination.write(line);
      if (i % 5 === 4) destination.flushSync();
    }
    let text = '';
    for (let round = 0; round < 10; round++) {
      text += drain(reader);
      destination.flushSync();
    }
    text += drain(reader);
    expect(text.slice(0, filler.length)).toBe(filler);
    expect(text.slice(filler.length)).toBe(sent.join(''));
  });

  it('never blocks on a non-blocking pipe nobody reads: lines wait up to the limit, the rest are counted and reported', async () => {
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const reader = open(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const destination = destinationOn(open(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
    const line = `${JSON.stringify({ msg: 'x'.repeat(1000) })}\n`;
    const lineCount = Math.ceil((LOG_PENDING_MAX_BYTES * 1.5) / line.length);
    for (let i = 0; i < lineCount; i++) destination.write(line);
    let text = '';
    // Each flush writes what the pipe takes (64 KiB) and keeps the rest; the report of the dropped lines comes last.
    for (let round = 0; round < 1000 && !text.includes('droppedLines'); round++) {
      destination.flushSync();
      text += drain(reader);
    }
    const lines = text.trimEnd().split('\n');
    const kept = lines.filter((received) => received === line.trimEnd()).length;
    const report = JSON.parse(lines[lines.length - 1]) as { level: number; droppedLines: number };
    expect(kept).toBe(Math.floor(LOG_PENDING_MAX_BYTES / line.length));
    expect(lines).toHaveLength(kept + 1);
    expect(report).toMatchObject({ level: 40, droppedLines: lineCount - kept });
  });
});

/** Everything the pipe holds now. */
function drain(reader: number): string {
  const chunks: Buffer[] = [];
  const chunk = Buffer.alloc(1 << 16);
  for (;;) {
    try {
      const bytes = readSync(reader, chunk);
      if (bytes === 0) break;
      chunks.push(Buffer.from(chunk.subarray(0, bytes)));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EAGAIN') break;
      throw error;
    }
  }
  return Buffer.concat(chunks).toString();
}
