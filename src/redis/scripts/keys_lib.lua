-- module: keyspace
-- keys_lib: prepended to every script, and a module of every function library, that derives keys
-- from the keys in KEYS. A derived key keeps
-- the hash tag of the key it comes from, so the script still touches one Cluster slot.
-- KEYS: 0

-- The key `key` with its trailing `suffix` replaced by `replacement`. Raises an error when `key` does
-- not end with `suffix`: a caller passing the wrong key must fail loudly, never touch another key.
-- The keys it answered, by suffix, replacement and key, kept from call to call (a pure function of the three,
-- emptied when it holds `max`): a write of 8 segments asks some 400 (two string.sub and a concatenation each,
-- a new string interned each time) where a known one is three table lookups.
local SIBLINGS = { by = {}, size = 0, max = 4096 }

local function sibling_key(key, suffix, replacement)
  local of_suffix = SIBLINGS.by[suffix]
  local of_replacement = of_suffix and of_suffix[replacement]
  local known = of_replacement and of_replacement[key]
  if known then return known end
  if string.sub(key, -#suffix) ~= suffix then
    error({ err = 'TB_KEY_SHAPE key "' .. key .. '" does not end with "' .. suffix .. '"' })
  end
  local sibling = string.sub(key, 1, #key - #suffix) .. replacement
  if SIBLINGS.size >= SIBLINGS.max then SIBLINGS.by, SIBLINGS.size, of_suffix = {}, 0, nil end
  if not of_suffix then
    of_suffix = {}
    SIBLINGS.by[suffix] = of_suffix
  end
  of_replacement = of_suffix[replacement]
  if not of_replacement then
    of_replacement = {}
    of_suffix[replacement] = of_replacement
  end
  of_replacement[key], SIBLINGS.size = sibling, SIBLINGS.size + 1
  return sibling
end

-- sibling_key as a function of the key alone, for a module's own key beside another: sibling_of('cfg',
-- 'groups') maps "<tag>:cfg" to "<tag>:groups".
local function sibling_of(suffix, replacement)
  return function(key) return sibling_key(key, suffix, replacement) end
end

keyspace.sibling_key = sibling_key
keyspace.sibling_of = sibling_of
