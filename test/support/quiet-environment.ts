/**
 * Jest's node environment, quiet while tests pass: what a test file writes to stdout and stderr (the
 * service's log lines, Nest's logger, console output) is held per test and printed, under the test's
 * name, only when that test or a hook around it fails. A green run prints Jest's summary alone.
 * TEST_LOGS=1 prints everything as it comes. TEST_COST_FILE=<path> records each file's cost (./file-cost.ts).
 */
import type { EnvironmentContext, JestEnvironmentConfig } from '@jest/environment';
import type { Circus } from '@jest/types';
import { TestEnvironment } from 'jest-environment-node';
import { APP_BOOTS, AppBoots, FileCostStart, markLoaded, recordFileCost, startFileCost } from './file-cost';

const LOUD = process.env.TEST_LOGS === '1';
const COST_FILE = process.env.TEST_COST_FILE;
/** Most characters held for one test: a test that logs without end keeps only its last lines. */
const MAX_HELD_CHARS = 1 << 20;

type StreamName = 'stdout' | 'stderr';
type Write = typeof process.stdout.write;

export default class QuietEnvironment extends TestEnvironment {
  private held: Array<[StreamName, string]> = [];
  private heldChars = 0;
  private readonly testPath: string;
  private costStart?: FileCostStart;
  private readonly realWrites: Record<StreamName, Write> = {
    stdout: process.stdout.write,
    stderr: process.stderr.write,
  };

  constructor(config: JestEnvironmentConfig, context: EnvironmentContext) {
    super(config, context);
    this.testPath = context.testPath;
  }

  async setup(): Promise<void> {
    if (COST_FILE) this.costStart = await startFileCost();
    await super.setup();
    if (LOUD) return;
    for (const stream of ['stdout', 'stderr'] as const) process[stream].write = this.holder(stream);
    process.once('exit', this.exiting);
  }

  async teardown(): Promise<void> {
    process.off('exit', this.exiting);
    this.restoreWrites();
    await super.teardown();
    if (COST_FILE && this.costStart) await recordFileCost(COST_FILE, this.testPath, this.costStart, this.appBoots());
  }

  handleTestEvent(event: Circus.Event): void {
    if (event.name === 'run_start' && this.costStart) markLoaded(this.costStart);
    if (LOUD) return;
    if (event.name === 'test_done') {
      if (event.test.errors.length > 0) this.release(fullName(event.test));
      else this.forget();
    } else if (event.name === 'hook_failure') {
      this.release(`a ${event.hook.type} hook`);
    }
  }

  /**
   * A test file that ends the process (Nest's `app.get` of a missing provider exits with 1, say) never
   * reaches teardown: what it wrote, Jest's own "process.exit called" included, is printed on the way out.
   */
  private readonly exiting = (): void => {
    this.restoreWrites();
    this.release('the test file, which ended the process');
  };

  private restoreWrites(): void {
    process.stdout.write = this.realWrites.stdout;
    process.stderr.write = this.realWrites.stderr;
  }

  private appBoots(): AppBoots | undefined {
    return (this.global as { [APP_BOOTS]?: AppBoots })[APP_BOOTS];
  }

  /** A write that holds what it is given and answers like a stream that took it all. */
  private holder(stream: StreamName): Write {
    return ((chunk: string | Uint8Array, encoding?: unknown, callback?: unknown) => {
      this.hold(stream, typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      const done = typeof encoding === 'function' ? encoding : callback;
      if (typeof done === 'function') done();
      return true;
    }) as Write;
  }

  private hold(stream: StreamName, text: string): void {
    this.held.push([stream, text]);
    this.heldChars += text.length;
    while (this.heldChars > MAX_HELD_CHARS && this.held.length > 1) this.heldChars -= this.held.shift()![1].length;
  }

  /** Prints what was held since the last test ended, under `title`. */
  private release(title: string): void {
    if (this.held.length === 0) return;
    const write = (stream: StreamName, text: string) => this.realWrites[stream].call(process[stream], text);
    write('stderr', `\n--- output of ${title} ---\n`);
    for (const [stream, text] of this.held) write(stream, text);
    write('stderr', `--- end of output of ${title} ---\n`);
    this.forget();
  }

  private forget(): void {
    this.held = [];
    this.heldChars = 0;
  }
}

function fullName(test: Circus.TestEntry): string {
  const names = [test.name];
  for (let block = test.parent; block.parent; block = block.parent) names.unshift(block.name);
  return names.join(' › ');
}
