-- requires: call_state, idempotency, reader
-- request_claim: the ledger entry of a retry-safe request on a sharded board. Each shard's part of the
-- write is retry-safe on its own shard; this entry, on one shard chosen by the key, sees the request
-- whole: the same key with another request is refused whichever shards it touches, and once the
-- request's answer is stored (request_complete) a repeat answers it byte for byte, board-wide rank
-- included, without touching any shard.
-- Keys: cfg (config hash of the ledger shard: the entries live in its idem buckets)
-- Args (reader.read_call, CALLS.request_claim): the header (now, no version, no windows), then
--   idem_key, idem_fingerprint, idem_context ("pending"), idem_retention   idem_lib's; body ("")
-- Reply (reader.answer, CALLS.request_claim, after idem_lib's outcome and context): body: "" claimed
--   now (outcome 0) or before and not answered yet (outcome 1, context "pending": the parts are
--   applied again, each replaying where it already ran); the answer (outcome 1, context "done");
--   outcome 2: the key was used for another request
local function request_claim(keys, args)
  local cfg_key = keys[1]
  local header, arg = call_state.begin_named_call(keys, args, CALLS.request_claim)
  local idem = idempotency.idem_of(arg, 'req\31')
  local stored = idempotency.idem_begin(cfg_key, 'cfg', idem, header.now_ms)
  if stored then return stored end
  return idempotency.idem_finish(cfg_key, 'cfg', idem, header.now_ms, reader.answer(CALLS.request_claim, { body = arg.body }))
end
