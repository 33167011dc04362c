import { readFileSync } from 'node:fs';

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in these ticks. */
const CLOCK_TICKS_PER_SEC = 100;

export async function waitForHttp(url: string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${url} never answered`);
}

/** User + system CPU seconds of a process so far (Linux /proc; 0 elsewhere or without a pid). */
export function cpuSeconds(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after "pid (name) "; the name itself may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SEC;
  } catch {
    return 0;
  }
}
