import type { Redis } from 'ioredis';

/** id, time, µs, arguments, client address, client name. */
type SlowlogEntry = [number, number, number, string[], string, string];
/** The client SLOWLOG names for a command a script ran. */
const SCRIPT_CLIENT = '?:0';

/** One call a client sent (FCALL …) and the commands its script ran, each as its arguments. */
export interface LoggedCall {
  call: string[];
  commands: string[][];
}

/** Logs every command `node` runs from now on (SLOWLOG at 0 µs), from an empty log: counts without a clock. */
export async function logEveryCommand(node: Redis): Promise<void> {
  await node.config('SET', 'slowlog-log-slower-than', '0');
  await node.config('SET', 'slowlog-max-len', '100000');
  await node.slowlog('RESET');
}

/** Back to logging only commands over 10 ms. */
export async function stopLoggingEveryCommand(node: Redis): Promise<void> {
  await node.config('SET', 'slowlog-log-slower-than', '10000');
}

/** The calls clients sent since logEveryCommand, oldest first, each with the commands its script ran. */
export async function loggedCalls(node: Redis): Promise<LoggedCall[]> {
  const entries = (await node.slowlog('GET', 100_000)) as SlowlogEntry[];
  const calls: LoggedCall[] = [];
  let commands: string[][] = [];
  // Oldest first: a script's commands are logged before the call that ran them.
  for (const [, , , args, client] of entries.reverse()) {
    if (client === SCRIPT_CLIENT) {
      commands.push(args);
    } else {
      calls.push({ call: args, commands });
      commands = [];
    }
  }
  return calls;
}
