/**
 * How a bench tells the service's script calls in Redis's own stats: the service calls Redis functions
 * (FCALL, FCALL_RO); EVAL and EVALSHA stay for the benches' own scripts. A bench summing only one of
 * them reads 0 when the service calls the other.
 */
const SCRIPT_COMMANDS = /^(fcall|fcall_ro|evalsha|eval)$/i;

/** Whether a SLOWLOG entry's command (its first argument) is a script call. */
export function isScriptCall(command: string): boolean {
  return SCRIPT_COMMANDS.test(command);
}

/** Calls and microseconds of every script command in an INFO commandstats answer. */
export function scriptCommandStats(commandstats: string): { calls: number; micros: number } {
  const lines = commandstats.matchAll(/cmdstat_(\w+):calls=(\d+),usec=(\d+)/g);
  const totals = { calls: 0, micros: 0 };
  for (const [, command, calls, micros] of lines)
    if (isScriptCall(command)) {
      totals.calls += Number(calls);
      totals.micros += Number(micros);
    }
  return totals;
}
