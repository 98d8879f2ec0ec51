/**
 * A bounded memo for values that recur event after event (schema URIs, paths):
 * `map`'s value for `key`, computed by `compute` on a miss. The map is emptied
 * when it reaches `limit` entries, so odd inputs cannot grow it without bound.
 */
export function memo<K, V>(map: Map<K, V>, key: K, limit: number, compute: (key: K) => V): V {
  let v = map.get(key)
  if (v === undefined) {
    v = compute(key)
    if (map.size >= limit) map.clear()
    map.set(key, v)
  }
  return v
}
