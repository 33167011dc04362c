import { TrendboardClient, TrendboardError } from '@trendboard/client';

const tb = new TrendboardClient({ baseUrl: 'http://localhost:3000', adminToken: 'change-me-to-a-long-secret' });

// A board with two windows: the last hour in 5-minute slots, the last day in 1-hour slots.
const board = await tb.boards.put('articles', {
  windows: [
    { period: '1h', interval: '5m' },
    { name: 'day', period: '24h', interval: '1h' },
  ],
});
console.log(board.windows.map((w) => w.name)); // ["1h","day"]

// Increments answer every window's new score and rank; a batch is one atomic step.
await tb.boards.increment('articles', 'a-1');
const five = await tb.boards.increment('articles', 'a-2', { amount: 5 });
console.log(five.windows.day); // {"score":5,"rank":1,"previousRank":null}
await tb.boards.batch('articles', [{ item: 'a-3', amount: 3 }, { item: 'a-1' }]);

// Likes count once per user; unlike takes the like back.
console.log((await tb.boards.like('articles', 'a-3', 'ann')).counted); // true
console.log((await tb.boards.unlike('articles', 'a-3', 'ann')).counted); // true

// The same Idempotency-Key twice (as the client's own retries send it): applied once.
await tb.boards.increment('articles', 'a-4', { amount: 2 }, { idempotencyKey: 'order-17' });
await tb.boards.increment('articles', 'a-4', { amount: 2 }, { idempotencyKey: 'order-17' });

// Trending: top-N, an item's standing, an item with its neighbours.
const top = await tb.boards.top('articles', { window: 'day', limit: 10 });
console.log(top.items.map((row) => [row.item, row.score])); // [["a-2",5],["a-3",3],["a-4",2],["a-1",2]]
const standing = await tb.boards.item('articles', 'a-3', { window: '1h' });
console.log([standing.rank, standing.percentile]); // [2,66.67]
console.log((await tb.boards.around('articles', 'a-3', { radius: 1 })).items.length); // 3

// Errors are TrendboardError: the service's code, and whether a retry could help.
const error = await tb.boards.top('articles', { window: 'week' }).catch((e: TrendboardError) => e);
console.log(error instanceof TrendboardError && [error.code, error.status, error.retryable]); // ["WINDOW_NOT_FOUND",404,false]

await tb.boards.delete('articles'); // every key of the board is gone
