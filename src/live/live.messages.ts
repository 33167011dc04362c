/** What the live stream answers and logs. */
export const LIVE_MESSAGES = {
  instanceFull: (max: number) =>
    `this instance serves its most live streams (${max}); try again later or on another instance`,
  clientFull: (max: number) => `this client (API key, else address) holds its most live streams (${max}); close one`,
  segmentsFull: (board: string, max: number) =>
    `the live streams of board "${board}" on this instance watch their most distinct segments (${max}): watch one of those, or the whole board`,
  pollsFailed: (failed: number, polled: number, board: string, reason: string) =>
    `${failed} of ${polled} live board polls failed (e.g. "${board}": ${reason})`,
  pollsShed: (pending: number) =>
    `live stream polls skipped while Redis has ${pending} unanswered commands of this instance (requests first)`,
  clientsDropped: (count: number, why: string) => `${count} live stream client(s) dropped: ${why}`,
  suppressed: (count: number) => ` (${count} more since the last such line)`,
};
