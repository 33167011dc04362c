-- requires: call_state, idempotency
-- request_claim: the ledger entry of a retry-safe request on a sharded board. Each shard's part of the
-- write is retry-safe on its own shard; this entry, on one shard chosen by the key, sees the request
-- whole: the same key with another request is refused whichever shards it touches, and once the
-- request's answer is stored (request_complete) a repeat answers it byte for byte, board-wide rank
-- included, without touching any shard.
-- KEYS: 1
-- KEYS[1]        config hash of the ledger shard (the entries live in its idem buckets)
-- ARGV[1]        now, unix milliseconds
-- ARGV[2] .. ARGV[5]: idempotency key, request fingerprint, context ("pending"), retention (ms) (idem_lib)
-- Reply: { 0, "pending" } claimed now; { 1, "pending" } claimed before and not answered yet (the
--        parts are applied again: each replays where it already ran); { 1, "done", body } answered;
--        { 2, "" } the key was used for another request
local function request_claim(keys, args)
  call_state.begin_call(keys, args)
  local now_ms = tonumber(ARGV[1])
  local idem = idempotency.idem_args(ARGV, 2, 'req\31')
  local stored = idempotency.idem_begin(KEYS[1], 'cfg', idem, now_ms)
  if stored then return stored end
  return idempotency.idem_finish(KEYS[1], 'cfg', idem, now_ms, {})
end
