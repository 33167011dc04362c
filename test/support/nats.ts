import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInbox, headers, type NatsConnection } from '@nats-io/nats-core';
import { freePort, stopChild } from '../../harness/processes';

/** A nats-server with JetStream of this test file's own, on a free port (never 4222), its store in a temp dir. */
export interface TestNats {
  url: string;
  port: number;
  /** SIGKILL and start again on the same port and store (a crash: JetStream keeps what it had synced). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startTestNats(): Promise<TestNats> {
  requireNatsServer();
  // In memory where there is a tmpfs: a restart (SIGKILL) keeps the store, and writes cost no disk.
  const dir = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'tb-nats-'));
  const started = await spawnOnFreePort(dir);
  const port = started.port;
  let child = started.child;
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    restart: async () => {
      await stopChild(child);
      child = await spawnNats(port, dir);
    },
    stop: async () => {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A missing nats-server said in one line, not as a spawn error code. */
function requireNatsServer(): void {
  if (spawnSync('nats-server', ['--version']).status !== 0)
    throw new Error(
      'No nats-server for the NATS ingest tests: install it (apt-get install nats-server / brew install nats-server).',
    );
}

/** Starts attempts on free ports: another file's server may take a port between freePort() and the bind. */
const SPAWN_ATTEMPTS = 3;

async function spawnOnFreePort(dir: string): Promise<{ child: ChildProcess; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return { child: await spawnNats(port, dir), port };
    } catch (error) {
      if (attempt >= SPAWN_ATTEMPTS) throw error;
    }
  }
}

async function spawnNats(port: number, dir: string): Promise<ChildProcess> {
  const child = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let said = '';
  child.stderr?.on('data', (chunk: Buffer) => (said = (said + chunk.toString()).slice(-500)));
  for (let attempt = 0; attempt < 200; attempt++) {
    if (child.exitCode !== null) throw new Error(`nats-server exited with ${child.exitCode}: ${said.trim()}`);
    if (await listening(port)) return child;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  await stopChild(child);
  throw new Error(`nats-server did not listen on ${port}`);
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = netConnect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** How long a round of publications waits for JetStream's answers before the unanswered ones are sent again. */
const PUBLISH_ANSWER_WAIT_MS = 2000;

/**
 * Publishes each payload until JetStream stores it, under its message id (`Nats-Msg-Id`): a copy sent
 * again after a lost answer is dropped as a duplicate, answered with the stored copy's sequence. Answers
 * each payload's stream sequence, in the payloads' order. The answers come to one inbox (by index), not
 * to a request each: a request's promise and timer cost four times a publication's CPU (200 000 of them:
 * 6.8 against 1.7 s of the test's CPU, load 11).
 */
export async function publishStored(
  connection: NatsConnection,
  subject: string,
  messages: ReadonlyArray<{ payload: string; id: string }>,
): Promise<number[]> {
  const inbox = createInbox();
  const sequences: Array<number | undefined> = new Array(messages.length);
  let unanswered = messages.length;
  let answered: () => void = () => undefined;
  const answers = connection.subscribe(`${inbox}.*`, {
    callback: (error, reply) => {
      const k = Number(reply?.subject.slice(inbox.length + 1));
      const sequence = error ? undefined : storedSequence(reply.data);
      if (sequence === undefined || sequences[k] !== undefined) return;
      sequences[k] = sequence;
      if (--unanswered === 0) answered();
    },
  });
  try {
    while (unanswered > 0) {
      const round = new Promise<void>((resolve) => (answered = resolve));
      messages.forEach(({ payload, id }, k) => {
        if (sequences[k] === undefined) publishOnce(connection, subject, payload, id, `${inbox}.${k}`);
      });
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([round, new Promise((resolve) => (timer = setTimeout(resolve, PUBLISH_ANSWER_WAIT_MS)))]);
      clearTimeout(timer);
    }
  } finally {
    answers.unsubscribe();
  }
  return sequences as number[];
}

/** One publication; one the client refuses (closed, its buffer full while the server restarts) is sent again next round. */
function publishOnce(connection: NatsConnection, subject: string, payload: string, id: string, reply: string): void {
  const stamped = headers();
  stamped.set('Nats-Msg-Id', id);
  try {
    connection.publish(subject, payload, { headers: stamped, reply });
  } catch {
    // Not sent: no answer comes, and the next round sends it again.
  }
}

/** The sequence of a JetStream answer (PubAck, a duplicate's too); undefined for an error or no JSON. */
function storedSequence(data: Uint8Array): number | undefined {
  try {
    const answer = JSON.parse(new TextDecoder().decode(data)) as { seq?: unknown };
    return typeof answer.seq === 'number' ? answer.seq : undefined;
  } catch {
    return undefined;
  }
}
