/**
 * Lua scripts of the Redis repository. Each runs atomically on the server, so an append (idempotency check,
 * log push, version bump) and a compaction (version check, archive, window swap, version bump) are each one
 * indivisible step, whatever other clients do.
 *
 * Per-session keys (all share the `{sessionId}` hash tag): KEYS[1] session hash, KEYS[2] events hash
 * (event id → flag + JSON, flag '1' = archived), KEYS[3] active id list, KEYS[4] archived id list,
 * KEYS[5] set of ids appended already archived (they join the archive at the next compaction).
 */

/** Aligns every per-session key's expiry with the session's expiresAt (ms), or removes it when there is none. */
const ALIGN_TTL = `
local function align_ttl(keys)
  local at = redis.call('HGET', keys[1], 'expiresAt')
  for k = 1, 5 do
    if at and at ~= '' then redis.call('PEXPIREAT', keys[k], at) else redis.call('PERSIST', keys[k]) end
  end
end
local function push_all(key, ids)
  for s = 1, #ids, 1000 do
    redis.call('RPUSH', key, unpack(ids, s, math.min(s + 999, #ids)))
  end
end
`;

/** ARGV: event id, encoded value, ttl flag. Returns -1 missing session, 0 replay, 1 appended. */
export const APPEND_SCRIPT = `${ALIGN_TTL}
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('RPUSH', KEYS[3], ARGV[1])
if string.sub(ARGV[2], 1, 1) == '1' then redis.call('SADD', KEYS[5], ARGV[1]) end
redis.call('HINCRBY', KEYS[1], 'version', 1)
if ARGV[3] == '1' then align_ttl(KEYS) end
return 1
`;

/**
 * ARGV: expected version, ttl flag, number of archived events, a token unique to the call, then (id, value)
 * pairs of the archived events, then (id, value) pairs of the retained ones. Returns -1 missing session,
 * 0 stale version, 1 committed — also when this very call (same token) committed before: a re-send.
 * Touches only the active window and the given events: cost independent of the archive's length.
 */
export const COMPACT_SCRIPT = `${ALIGN_TTL}
local version = redis.call('HGET', KEYS[1], 'version')
if not version then return -1 end
if version ~= ARGV[1] then
  if redis.call('HGET', KEYS[1], 'compaction') == ARGV[4] then return 1 end
  return 0
end
local active = redis.call('LRANGE', KEYS[3], 0, -1)
local was_active = {}
for _, id in ipairs(active) do was_active[id] = true end
local keep = {}
local to_archive = {}
local pending = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[5])) do pending[id] = true end
for _, id in ipairs(active) do
  if pending[id] then to_archive[#to_archive + 1] = id; keep[id] = true end
end
redis.call('DEL', KEYS[5])
local i = 5
for _ = 1, tonumber(ARGV[3]) do
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
  to_archive[#to_archive + 1] = ARGV[i]
  keep[ARGV[i]] = true
  i = i + 2
end
local window = {}
while i <= #ARGV do
  local id = ARGV[i]
  if not was_active[id] and not keep[id] then
    local old = redis.call('HGET', KEYS[2], id)
    -- An id is unique per session: a retained copy of an archived event replaces it (rare: an O(archive) scan).
    if old and string.sub(old, 1, 1) == '1' then redis.call('LREM', KEYS[4], 0, id) end
  end
  redis.call('HSET', KEYS[2], id, ARGV[i + 1])
  window[#window + 1] = id
  keep[id] = true
  i = i + 2
end
for _, id in ipairs(active) do
  if not keep[id] then redis.call('HDEL', KEYS[2], id) end
end
push_all(KEYS[4], to_archive)
redis.call('DEL', KEYS[3])
push_all(KEYS[3], window)
redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('HSET', KEYS[1], 'compaction', ARGV[4])
if ARGV[2] == '1' then align_ttl(KEYS) end
return 1
`;

/**
 * A consistent snapshot of the log in one call. ARGV[1]: 'all' (archive then window), 'active' (window only);
 * ARGV[2]: when set, only the newest N ids of that sequence. Returns the encoded values in log order.
 */
export const READ_SCRIPT = `
local ids = {}
local function append_range(key, from, to)
  for _, id in ipairs(redis.call('LRANGE', key, from, to)) do ids[#ids + 1] = id end
end
local n = tonumber(ARGV[2])
if ARGV[1] == 'active' then
  if n then append_range(KEYS[3], -n, -1) else append_range(KEYS[3], 0, -1) end
else
  if n then
    local active_len = redis.call('LLEN', KEYS[3])
    if active_len < n then append_range(KEYS[4], -(n - active_len), -1) end
    append_range(KEYS[3], -n, -1)
  else
    append_range(KEYS[4], 0, -1)
    append_range(KEYS[3], 0, -1)
  end
end
local out = {}
for s = 1, #ids, 1000 do
  local values = redis.call('HMGET', KEYS[2], unpack(ids, s, math.min(s + 999, #ids)))
  for _, v in ipairs(values) do if v then out[#out + 1] = v end end
end
return out
`;

/**
 * KEYS[1] session hash, KEYS[2] new user's set, KEYS[3] expiry zset, KEYS[4] previous user's set, KEYS[5..8]
 * the other per-session keys. ARGV: previous userId ('' = none), id, userId, createdAt, expiresAt ('' = never),
 * metadata JSON, ttl flag. Returns 0 when the stored userId changed since it was read (the caller retries).
 */
export const SAVE_SCRIPT = `
local previous = redis.call('HGET', KEYS[1], 'userId')
if (previous or '') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'id', ARGV[2], 'userId', ARGV[3], 'createdAt', ARGV[4], 'expiresAt', ARGV[5], 'metadata', ARGV[6])
redis.call('HSETNX', KEYS[1], 'version', 0)
if previous and previous ~= ARGV[3] then redis.call('SREM', KEYS[4], ARGV[2]) end
redis.call('SADD', KEYS[2], ARGV[2])
if ARGV[5] == '' then redis.call('ZREM', KEYS[3], ARGV[2]) else redis.call('ZADD', KEYS[3], ARGV[5], ARGV[2]) end
if ARGV[7] == '1' then
  local keys = { KEYS[1], KEYS[5], KEYS[6], KEYS[7], KEYS[8] }
  for _, k in ipairs(keys) do
    if ARGV[5] ~= '' then redis.call('PEXPIREAT', k, ARGV[5]) else redis.call('PERSIST', k) end
  end
end
return 1
`;

/**
 * KEYS[1..5] per-session keys, KEYS[6] the owner's user set, KEYS[7] expiry zset. ARGV: userId read before
 * ('' = none), id. Returns 0 when the owner changed since it was read (the caller retries).
 */
export const DELETE_SCRIPT = `
local owner = redis.call('HGET', KEYS[1], 'userId')
if (owner or '') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5])
if owner then redis.call('SREM', KEYS[6], ARGV[2]) end
redis.call('ZREM', KEYS[7], ARGV[2])
return 1
`;

/**
 * APPEND_SCRIPT for a batch, in order. ARGV: ttl flag, then (id, value) pairs. Returns -1 missing session,
 * else how many ids were new (the version grows by that much).
 */
export const APPEND_MANY_SCRIPT = `${ALIGN_TTL}
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local added = 0
for i = 2, #ARGV, 2 do
  if redis.call('HSETNX', KEYS[2], ARGV[i], ARGV[i + 1]) == 1 then
    redis.call('RPUSH', KEYS[3], ARGV[i])
    if string.sub(ARGV[i + 1], 1, 1) == '1' then redis.call('SADD', KEYS[5], ARGV[i]) end
    added = added + 1
  end
end
if added > 0 then redis.call('HINCRBY', KEYS[1], 'version', added) end
if ARGV[1] == '1' then align_ttl(KEYS) end
return added
`;
