import type { Cluster, Redis } from 'ioredis';

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

/** A logged command's arguments: SLOWLOG keeps 31 and tells how many more in a last one. */
export function argumentsOf(args: string[]): number {
  const more = /^\.\.\. \((\d+) more arguments\)$/.exec(args[args.length - 1]);
  return more ? args.length - 1 + Number(more[1]) : args.length;
}

/** What one expiry pass (ExpiryService.expireDue) answers that the loop reads. */
interface ExpiryPass {
  failures: number;
  stillDraining: number;
}

/**
 * Expiry passes (`pass()`) until none is still draining, at most `mostPasses`, each logged on `node` and
 * followed by a second of `advance`: the expire calls they sent, with their scripts' commands, and the
 * passes run. A pass with a failure stops the loop with an error.
 */
export async function expirePassesLogged(
  node: Redis,
  pass: () => Promise<ExpiryPass>,
  advance: (ms: number) => void,
  mostPasses: number,
): Promise<{ calls: LoggedCall[]; passes: number }> {
  const calls: LoggedCall[] = [];
  let passes = 0;
  for (let draining = true; draining && passes < mostPasses; passes++) {
    await logEveryCommand(node);
    const result = await pass();
    calls.push(...(await loggedCalls(node)).filter(({ call }) => /_expire$/.test(String(call[1]))));
    await stopLoggingEveryCommand(node);
    if (result.failures > 0) throw new Error(`an expiry pass failed on ${result.failures} board(s)`);
    draining = result.stillDraining > 0;
    advance(1_000);
  }
  return { calls, passes };
}

/** Sets every master of `client`'s INFO commandstats back to zero (before the writes commandCalls then counts). */
export async function resetCommandStats(client: Redis | Cluster): Promise<void> {
  const nodes: Redis[] = 'nodes' in client ? client.nodes('master') : [client];
  await Promise.all(nodes.map((node) => node.config('RESETSTAT')));
}

/** The calls of `command` (lower case, as INFO commandstats names it) every master of `client` ran so far. */
export async function commandCalls(client: Redis | Cluster, command: string): Promise<number> {
  const nodes: Redis[] = 'nodes' in client ? client.nodes('master') : [client];
  const stats = await Promise.all(nodes.map((node) => node.info('commandstats')));
  return stats.reduce(
    (sum, text) => sum + Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(text)?.[1] ?? 0),
    0,
  );
}

/** The expired fields a logged call drained: each a ZINCRBY of its amount taken back from a window's results. */
export const drainedFields = ({ commands }: LoggedCall): number =>
  commands.filter(([name, key, amount]) => name.toLowerCase() === 'zincrby' && /:top$/.test(key) && Number(amount) < 0)
    .length;

/** The most entries one HSCAN of a logged call asked of a hash whose key `key` matches (its COUNT). */
export const mostScanned = ({ commands }: LoggedCall, key: RegExp): number =>
  Math.max(
    0,
    ...commands
      .filter(([name, scanned]) => name.toLowerCase() === 'hscan' && key.test(scanned))
      .map((command) => Number(command[command.findIndex((arg) => arg.toUpperCase() === 'COUNT') + 1])),
  );
