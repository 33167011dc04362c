import { TrendboardClient, TrendboardError } from '@trendboard/client';

const tb = new TrendboardClient({ baseUrl: 'http://localhost:3000', adminToken: 'change-me-to-a-long-secret' });
await tb.boards.put('posts', { windows: [{ period: '1h', interval: '5m' }] });
await tb.boards.increment('posts', 'post-1', { amount: 5 }); // one Idempotency-Key, reused by its retries
await tb.boards.like('posts', 'post-2', 'ann');
const { items } = await tb.boards.top('posts', { window: '1h', limit: 10 });
console.log(items.map((row) => `${row.rank}. ${row.item} (${row.score})`)); // ["1. post-1 (5)","2. post-2 (1)"]
console.log(await tb.boards.item('nope', 'x').catch((error: TrendboardError) => error.code)); // "BOARD_NOT_FOUND"
for await (const event of tb.watchTop('posts', { limit: 3 })) {
  console.log(event.type, event.listing.items.length); // "snapshot" 2
  break;
}
