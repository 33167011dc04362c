import Redis, { Cluster } from 'ioredis';
import {
  DEAD_LETTER_BYTES,
  DEAD_LETTER_ENTRY_OVERHEAD_BYTES,
  DEAD_LETTER_PAYLOAD_BYTES,
  DEAD_LETTER_REASON_BYTES,
} from '../ingest.limits';
import { IngestSource, SourceMessage } from './source';

export interface RedisStreamDeclaration {
  kind: 'redis-stream';
  stream: string;
  url?: string;
  group?: string;
  board?: string;
  deadLetter?: string;
}

/**
 * Acknowledges an entry and writes its dead letter in one step, only when the acknowledgement took
 * it out of the pending list: a second attempt (a redelivery, another instance) finds it acknowledged
 * and writes nothing, so each bad entry is dead-lettered once. The dead letters are bounded in bytes:
 * each counts its fields' bytes and a fixed overhead (kept in the entry as `bytes`, the total in
 * KEYS[3]), and the oldest go until the total is within the budget (a few per call: an entry is at
 * most about 4.7 KB). A total left stale by an operator's XDEL or DEL only trims sooner, and heals
 * once the stream is down to the new entry. KEYS: stream, dead-letter stream, its byte total.
 * ARGV: group, id, source, reason, payload, budget (bytes), overhead per entry (bytes).
 */
const DEAD_LETTER_SCRIPT = `
if redis.call('XACK', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
local size = #ARGV[2] + #ARGV[3] + #ARGV[4] + #ARGV[5] + tonumber(ARGV[7])
local added = redis.call('XADD', KEYS[2], '*', 'source', ARGV[3], 'id', ARGV[2], 'reason', ARGV[4], 'payload', ARGV[5], 'bytes', size)
local total = redis.call('INCRBY', KEYS[3], size)
local budget = tonumber(ARGV[6])
while total > budget do
  local oldest = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', 16)
  for _, entry in ipairs(oldest) do
    if entry[1] == added then
      redis.call('SET', KEYS[3], size)
      return 1
    end
    local bytes = 0
    for i = 1, #entry[2], 2 do if entry[2][i] == 'bytes' then bytes = tonumber(entry[2][i + 1]) or 0 end end
    redis.call('XDEL', KEYS[2], entry[1])
    total = redis.call('DECRBY', KEYS[3], bytes)
    if total <= budget then break end
  end
end
return 1`;

type Entry = [id: string, fields: string[]];

/**
 * A Redis stream read through a consumer group. A blocking XREADGROUP needs a connection of its own,
 * so the source never shares the service's client: it duplicates it (the stream on the service's
 * Redis) or connects to `url`. On a Cluster the stream and its dead-letter stream must share a hash
 * slot (a `{tag}` in the stream name: the default `<stream>:dead` then shares it).
 */
export class RedisStreamSource implements IngestSource {
  private client?: Redis | Cluster;
  /** XAUTOCLAIM position while taking over entries earlier holders left pending; undefined once done. */
  private claimCursor?: string = '0-0';

  constructor(
    private readonly name: string,
    private readonly declaration: RedisStreamDeclaration,
    private readonly consumer: string,
    private readonly connect: (url: string | undefined) => Redis | Cluster,
  ) {}

  private get group(): string {
    return this.declaration.group ?? 'trendboard';
  }

  private get deadStream(): string {
    return this.declaration.deadLetter ?? `${this.declaration.stream}:dead`;
  }

  private get redis(): Redis | Cluster {
    if (!this.client) throw new Error(`source "${this.name}" is not open`);
    return this.client;
  }

  async open(): Promise<void> {
    this.client ??= this.connect(this.declaration.url);
    this.claimCursor = '0-0';
    try {
      // From 0: entries already in the stream when the source is declared are consumed (api.md).
      await this.redis.xgroup('CREATE', this.declaration.stream, this.group, '0', 'MKSTREAM');
    } catch (error) {
      if (!String(error).includes('BUSYGROUP')) throw error;
    }
  }

  async next(max: number, waitMs: number): Promise<SourceMessage[]> {
    // The lease holder is the group's only reader: every pending entry is an earlier holder's (or its
    // own, from a batch it dropped), older than anything new, so it takes them all over first.
    while (this.claimCursor !== undefined) {
      const reply = (await this.redis.xautoclaim(
        this.declaration.stream,
        this.group,
        this.consumer,
        0,
        this.claimCursor,
        'COUNT',
        max,
      )) as [string, Array<Entry | null>, string[]?];
      this.claimCursor = reply[0] === '0-0' ? undefined : reply[0];
      const entries = reply[1].filter((entry): entry is Entry => entry !== null);
      if (entries.length > 0) return entries.map(messageOf);
    }
    // BLOCK 0 would wait for ever: no wait asked, no BLOCK.
    const block = waitMs > 0 ? ['BLOCK', waitMs] : [];
    const reply = (await this.redis.call(
      'XREADGROUP',
      'GROUP',
      this.group,
      this.consumer,
      'COUNT',
      max,
      ...block,
      'STREAMS',
      this.declaration.stream,
      '>',
    )) as Array<[string, Entry[]]> | null;
    return reply === null ? [] : reply[0][1].map(messageOf);
  }

  async ack(messages: SourceMessage[]): Promise<void> {
    if (messages.length > 0)
      await this.redis.xack(this.declaration.stream, this.group, ...messages.map((message) => message.id));
  }

  async deadLetter(message: SourceMessage, reason: string): Promise<boolean> {
    const written = await this.redis.eval(
      DEAD_LETTER_SCRIPT,
      3,
      this.declaration.stream,
      this.deadStream,
      `${this.deadStream}:bytes`,
      this.group,
      message.id,
      this.name,
      cut(reason, DEAD_LETTER_REASON_BYTES),
      cut(message.payload, DEAD_LETTER_PAYLOAD_BYTES),
      DEAD_LETTER_BYTES,
      DEAD_LETTER_ENTRY_OVERHEAD_BYTES,
    );
    return written === 1;
  }

  async lag(): Promise<number> {
    const [groups, stream] = (await Promise.all([
      this.redis.xinfo('GROUPS', this.declaration.stream),
      this.redis.xinfo('STREAM', this.declaration.stream),
    ])) as [unknown[][], unknown[]];
    const lastGenerated = stream[stream.indexOf('last-generated-id') + 1];
    for (const fields of groups) {
      const info = new Map<string, unknown>();
      for (let i = 0; i + 1 < fields.length; i += 2) info.set(String(fields[i]), fields[i + 1]);
      if (info.get('name') !== this.group) continue;
      return undeliveredOf(info, lastGenerated) + Number(info.get('pending') ?? 0);
    }
    return 0;
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    client?.disconnect();
  }
}

/**
 * Entries not yet delivered to the group: none once its last delivered id is the stream's last
 * entry's, else Redis's `lag`. Redis counts that from the entries the group has read, a counter that
 * can fall behind for good across a restart of Redis (seen: a lag of 13 000 on a group that had
 * every entry delivered and acknowledged); and it is null when Redis cannot tell (entries deleted
 * mid-stream): pending alone then.
 */
function undeliveredOf(group: Map<string, unknown>, lastGenerated: unknown): number {
  if (group.get('last-delivered-id') === lastGenerated) return 0;
  const lag = group.get('lag');
  return typeof lag === 'number' ? lag : 0;
}

function messageOf([id, fields]: Entry): SourceMessage {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === 'event') return { id, payload: fields[i + 1] };
  return { id, payload: '' };
}

/** A text kept whole up to `bytes` (UTF-8), else its first `bytes` (a character cut in two is dropped). */
function cut(text: string, bytes: number): string {
  if (text.length * 3 <= bytes || Buffer.byteLength(text) <= bytes) return text;
  return Buffer.from(text)
    .subarray(0, bytes)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
}
