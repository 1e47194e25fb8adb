// Data-loading hook: runs `fn` when `deps` change and on reload(); ignores answers that
// arrive after a newer call started (so fast filter changes never show stale data).
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

/**
 * @template T
 * @param {() => Promise<T>} fn
 * @param {unknown[]} deps
 * @returns {{data: T|null, error: any, loading: boolean, reload: () => void, setData: (d: T) => void}}
 *   `data` is cleared when deps change; reload() keeps showing the old data until the new arrives.
 */
export function useAsync(fn, deps = []) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
  const callId = useRef(0);
  const fnRef = useRef(fn);
  fnRef.current = fn;

  const run = useCallback((keepData) => {
    const id = ++callId.current;
    setState((s) => ({ data: keepData ? s.data : null, error: null, loading: true }));
    Promise.resolve()
      .then(() => fnRef.current())
      .then(
        (data) => { if (id === callId.current) setState({ data, error: null, loading: false }); },
        (error) => { if (id === callId.current) setState((s) => ({ data: keepData ? s.data : null, error, loading: false })); },
      );
  }, []);

  useEffect(() => { run(false); }, deps);
  useEffect(() => () => { callId.current++; }, []);

  const reload = useCallback(() => run(true), [run]);
  const setData = useCallback((data) => setState({ data, error: null, loading: false }), []);
  return { ...state, reload, setData };
}
