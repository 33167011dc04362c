/**
 * Jest's node environment, quiet while tests pass: what a test file writes to stdout and stderr (the
 * service's log lines, Nest's logger, console output) is held per test and printed, under the test's
 * name, only when that test or a hook around it fails. A green run prints Jest's summary alone.
 * TEST_LOGS=1 prints everything as it comes.
 */
const { TestEnvironment } = require('jest-environment-node');

const LOUD = process.env.TEST_LOGS === '1';
/** Most bytes held for one test: a test that logs without end keeps only its last lines. */
const MAX_HELD_BYTES = 1 << 20;

class QuietEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.held = [];
    this.heldBytes = 0;
    this.realWrites = { stdout: process.stdout.write, stderr: process.stderr.write };
  }

  async setup() {
    await super.setup();
    if (LOUD) return;
    for (const stream of ['stdout', 'stderr']) {
      process[stream].write = (chunk, encoding, callback) => {
        this.hold(stream, typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
        const done = typeof encoding === 'function' ? encoding : callback;
        if (typeof done === 'function') done();
        return true;
      };
    }
  }

  async teardown() {
    process.stdout.write = this.realWrites.stdout;
    process.stderr.write = this.realWrites.stderr;
    await super.teardown();
  }

  hold(stream, text) {
    this.held.push([stream, text]);
    this.heldBytes += text.length;
    while (this.heldBytes > MAX_HELD_BYTES && this.held.length > 1) this.heldBytes -= this.held.shift()[1].length;
  }

  /** Prints what was held since the last test ended, under `title`. */
  release(title) {
    if (this.held.length === 0) return;
    this.realWrites.stderr.call(process.stderr, `\n--- output of ${title} ---\n`);
    for (const [stream, text] of this.held) this.realWrites[stream].call(process[stream], text);
    this.realWrites.stderr.call(process.stderr, `--- end of output of ${title} ---\n`);
    this.forget();
  }

  forget() {
    this.held = [];
    this.heldBytes = 0;
  }

  handleTestEvent(event) {
    if (LOUD) return;
    if (event.name === 'test_done') {
      if (event.test.errors.length > 0) this.release(fullName(event.test));
      else this.forget();
    } else if (event.name === 'hook_failure') {
      this.release(`a ${event.hook.type} hook`);
    }
  }
}

function fullName(test) {
  const names = [];
  for (let block = test; block && block.name !== 'ROOT_DESCRIBE_BLOCK'; block = block.parent) names.unshift(block.name);
  return names.join(' › ');
}

module.exports = QuietEnvironment;
