/**
 * Whether `value` has every one of `names` as a method. The capability guards are built on it: a capability
 * counts only when all of its methods are there, so a half-implemented one is treated as absent.
 */
export function hasMethods(value: unknown, names: readonly string[]): boolean {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return false;
  const candidate = value as Record<string, unknown>;
  return names.every((name) => typeof candidate[name] === 'function');
}
