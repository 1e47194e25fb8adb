/**
 * The Lua scripts of the plugin key-value store in Redis (`redis-plugin-kv.ts`). Each runs atomically
 * inside Redis, so a set's write and the evictions it makes cannot interleave with another replica's:
 * a plugin's bound holds exactly, whatever the replicas do at once.
 *
 * Per plugin: each entry at `<prefix><key>` (`tollgate:kv:<plugin>:<key>`, with PX when it has a
 * TTL), and its bookkeeping under `tollgate:kv-meta:<plugin>:` (a prefix no entry's key can have,
 * since a plugin name has no `:`):
 * - KEYS[2] `order`: sorted set of the keys, score a write sequence (KEYS[6], INCR): exact
 *   oldest-written-first order across replicas, whatever their clocks;
 * - KEYS[3] `expiry`: sorted set of the keys that have a TTL, score when they expire (Redis server
 *   ms, `TIME`, as PX counts);
 * - KEYS[4] `sizes`: hash key -> bytes (the key's and the value's, UTF-8: Lua's `#` counts bytes);
 * - KEYS[5] `bytes`: the plugin's total.
 * Redis drops an expired entry itself; its bookkeeping goes when a later set of the plugin finds it in
 * `expiry` (at most EXPIRED_PER_SET each set), so it is counted a while after it expired, never lost.
 */

const COMMON = `
local order, expiry, sizes, total = KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local prefix = ARGV[2]
local function forget(member)
  local size = redis.call('HGET', sizes, member)
  if not size then return end
  redis.call('HDEL', sizes, member)
  redis.call('ZREM', order, member)
  redis.call('ZREM', expiry, member)
  redis.call('DECRBY', total, size)
end
`;

/**
 * KEYS: entry, order, expiry, sizes, bytes, sequence. ARGV: key, entry prefix, value, ttlMs (0 =
 * none), maxBytes. Writes the entry, then evicts the oldest-written others until the plugin's entries
 * take at most maxBytes. Returns the entries evicted.
 */
export const KV_SET = `${COMMON}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for _, member in ipairs(redis.call('ZRANGEBYSCORE', expiry, '-inf', string.format('%.0f', now), 'LIMIT', 0, 64)) do
  forget(member)
  redis.call('DEL', prefix .. member)
end
local key, value, ttl, max = ARGV[1], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local size = #key + #value
forget(key)
local evicted = 0
while tonumber(redis.call('GET', total) or '0') + size > max do
  local oldest = redis.call('ZRANGE', order, 0, 0)
  if #oldest == 0 then break end
  forget(oldest[1])
  redis.call('DEL', prefix .. oldest[1])
  evicted = evicted + 1
end
if ttl > 0 then
  redis.call('SET', KEYS[1], value, 'PX', ttl)
  redis.call('ZADD', expiry, string.format('%.0f', now + ttl), key)
else
  redis.call('SET', KEYS[1], value)
end
redis.call('ZADD', order, redis.call('INCR', KEYS[6]), key)
redis.call('HSET', sizes, key, size)
redis.call('INCRBY', total, size)
return evicted
`;

/** KEYS: entry, order, expiry, sizes, bytes. ARGV: key, entry prefix. Removes the entry and its bookkeeping. */
export const KV_DELETE = `${COMMON}
forget(ARGV[1])
redis.call('DEL', KEYS[1])
return 1
`;
