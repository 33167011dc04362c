import type { connect } from '@nats-io/transport-node';
import type { ConsumerConfig, JetStreamClient, JetStreamManager, JsMsg } from '@nats-io/jetstream';
import { DEAD_LETTER_PAYLOAD_BYTES, DEAD_LETTER_REASON_BYTES, NATS_ACK_WAIT_MS } from '../ingest.limits';
import { IngestSource, SourceMessage } from './source';

type NatsConnection = Awaited<ReturnType<typeof connect>>;

export interface NatsDeclaration {
  kind: 'nats';
  servers: string;
  stream: string;
  subject?: string;
  durable?: string;
  board?: string;
  deadLetter?: string;
}

/**
 * A JetStream stream read by a durable pull consumer. JetStream redelivers an unacknowledged
 * message after the ack wait, interleaved with new ones; a new lease holder must not apply newer
 * messages before older ones an earlier holder left unacknowledged (the apply script would then
 * take those for applied). So on open, when messages are pending acknowledgement, the durable
 * consumer is made again from its ack floor: every message not acknowledged comes again, in order.
 * Dead letters are published with `Nats-Msg-Id` "<source>:<sequence>": a JetStream stream capturing
 * the dead-letter subject drops a second copy within its duplicate window (2 min by default).
 */
export class NatsSource implements IngestSource {
  private connection?: NatsConnection;
  private manager?: JetStreamManager;
  private client?: JetStreamClient;
  private readonly held = new Map<string, JsMsg>();
  /** The consumer's delivery sequence of the last message received since open. */
  private lastDelivery?: number;

  constructor(
    private readonly name: string,
    private readonly declaration: NatsDeclaration,
  ) {}

  private get durable(): string {
    return this.declaration.durable ?? 'trendboard';
  }

  private get deadSubject(): string {
    return this.declaration.deadLetter ?? `trendboard.dead.${this.declaration.stream}`;
  }

  private get jsm(): JetStreamManager {
    if (!this.manager) throw new Error(`source "${this.name}" is not open`);
    return this.manager;
  }

  async open(): Promise<void> {
    // The NATS client (some 65 modules) is loaded by an app that opens a NATS source, not by every app.
    const [{ connect }, { AckPolicy, DeliverPolicy, jetstream, jetstreamManager }] = await Promise.all([
      import('@nats-io/transport-node'),
      import('@nats-io/jetstream'),
    ]);
    this.connection ??= await connect({
      servers: this.declaration.servers.split(','),
      reconnect: true,
      maxReconnectAttempts: -1,
    });
    this.manager ??= await jetstreamManager(this.connection);
    this.client ??= jetstream(this.connection);
    this.held.clear();
    this.lastDelivery = undefined;
    const config: Partial<ConsumerConfig> = {
      durable_name: this.durable,
      ack_policy: AckPolicy.Explicit,
      ack_wait: NATS_ACK_WAIT_MS * 1_000_000,
      ...(this.declaration.subject ? { filter_subject: this.declaration.subject } : {}),
    };
    const info = await this.jsm.consumers.info(this.declaration.stream, this.durable).catch((error: unknown) => {
      if (String(error).includes('consumer not found')) return undefined;
      throw error;
    });
    if (info === undefined) {
      await this.jsm.consumers.add(this.declaration.stream, { ...config, deliver_policy: DeliverPolicy.All });
    } else if (info.num_ack_pending > 0) {
      await this.jsm.consumers.delete(this.declaration.stream, this.durable);
      await this.jsm.consumers.add(this.declaration.stream, {
        ...config,
        deliver_policy: DeliverPolicy.StartSequence,
        opt_start_seq: info.ack_floor.stream_seq + 1,
      });
    }
  }

  async next(max: number, waitMs: number): Promise<SourceMessage[]> {
    if (!this.client) throw new Error(`source "${this.name}" is not open`);
    const consumer = await this.client.consumers.get(this.declaration.stream, this.durable);
    // A pull returns when it holds all it asked for, or when it expires: asking for what is waiting
    // returns at once; only an empty stream waits (for up to waitMs, at least the 1 s JetStream takes).
    const waiting = (await consumer.info()).num_pending;
    if (waiting === 0 && waitMs <= 0) return [];
    const fetched = await consumer.fetch({
      max_messages: waiting > 0 ? Math.min(max, waiting) : max,
      expires: Math.max(1000, waitMs),
    });
    const messages: SourceMessage[] = [];
    for await (const msg of fetched) {
      // Deliveries are numbered without gaps: a gap is a message this client never saw, which must
      // not be overtaken by newer ones. Failing here makes the runner open again (from the ack floor).
      if (this.lastDelivery !== undefined && msg.info.deliverySequence !== this.lastDelivery + 1)
        throw new Error(`JetStream delivery ${this.lastDelivery + 1} was not received`);
      this.lastDelivery = msg.info.deliverySequence;
      const id = `${msg.seq}-0`;
      this.held.set(id, msg);
      messages.push({ id, payload: msg.string() });
    }
    return messages;
  }

  async ack(messages: SourceMessage[]): Promise<void> {
    for (const message of messages) {
      this.held.get(message.id)?.ack();
      this.held.delete(message.id);
    }
    await this.connection?.flush();
  }

  async deadLetter(message: SourceMessage, reason: string): Promise<boolean> {
    if (!this.client) throw new Error(`source "${this.name}" is not open`);
    const body = JSON.stringify({
      source: this.name,
      id: message.id,
      reason: reason.slice(0, DEAD_LETTER_REASON_BYTES),
      payload: message.payload.slice(0, DEAD_LETTER_PAYLOAD_BYTES),
    });
    let written = true;
    try {
      const ack = await this.client.publish(this.deadSubject, body, { msgID: `${this.name}:${message.id}` });
      written = !ack.duplicate;
    } catch (error) {
      // No stream captures the subject: published plainly (a subscriber may still take it), never blocking the source.
      // The client answers a publish nobody stores as JetStreamNotEnabled (503, no responders).
      if (!/no responders|503|JetStreamNotEnabled/i.test(String(error))) throw error;
      this.connection?.publish(this.deadSubject, body);
    }
    await this.ack([message]);
    return written;
  }

  async lag(): Promise<number> {
    const info = await this.jsm.consumers.info(this.declaration.stream, this.durable);
    return info.num_pending + info.num_ack_pending;
  }

  async close(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    this.manager = undefined;
    this.client = undefined;
    this.held.clear();
    await connection?.close();
  }
}
