/**
 * Publishes messages to a JetStream stream, making the stream first when it does not exist (capturing
 * the subject): what docs/ingest.md's NATS example runs, with the client the service uses.
 * Usage: node scripts/nats-publish.mjs <servers> <stream> <subject> <payload>...
 * Prints each message's stream sequence, the id its source records ("<sequence>-0").
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';

const [servers, stream, subject, ...payloads] = process.argv.slice(2);
if (!servers || !stream || !subject || payloads.length === 0) {
  process.stderr.write('usage: node scripts/nats-publish.mjs <servers> <stream> <subject> <payload>...\n');
  process.exit(2);
}
const connection = await connect({ servers: servers.split(',') });
try {
  const manager = await jetstreamManager(connection);
  const exists = await manager.streams.info(stream).then(
    () => true,
    (error) => {
      if (String(error).includes('stream not found')) return false;
      throw error;
    },
  );
  if (!exists) await manager.streams.add({ name: stream, subjects: [subject] });
  const client = manager.jetstream();
  const sequences = [];
  for (const payload of payloads) sequences.push((await client.publish(subject, payload)).seq);
  process.stdout.write(`published to ${stream}: sequences ${sequences.join(', ')}\n`);
} finally {
  await connection.close();
}
