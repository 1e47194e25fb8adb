/** A value that follows `value` once it has stopped changing for `delayMs` (search boxes). */
import { useEffect, useState } from 'preact/hooks';

export function useDebounced(value, delayMs) {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), delayMs);
    return () => clearTimeout(timer);
  }, [value, delayMs]);
  return settled;
}
