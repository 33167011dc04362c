import type { Redis } from 'ioredis';

/** A SLOWLOG entry as ioredis answers it: id, time, µs, arguments, client address, client name. */
type SlowlogEntry = [number, number, number, string[], string, string];
/** The client address SLOWLOG gives the commands a script ran. */
const SCRIPT_CLIENT = '?:0';

/**
 * The commands each FCALL of a function named like `functionName` ran, on every node, from SLOWLOG
 * (logging every command: the caller sets `slowlog-log-slower-than` 0 and resets it before the calls).
 */
export async function scriptCallCommands(nodes: Redis[], functionName: RegExp): Promise<number[]> {
  const calls: number[] = [];
  for (const node of nodes) {
    let inCall = 0;
    // Oldest first: a script's commands are logged before the call that ran them.
    for (const [, , , args, client] of ((await node.slowlog('GET', 100_000)) as SlowlogEntry[]).reverse()) {
      if (client === SCRIPT_CLIENT) inCall += 1;
      else {
        if (functionName.test(String(args[1]))) calls.push(inCall);
        inCall = 0;
      }
    }
  }
  return calls;
}
