// A console mutation: runs the call, then invalidates the given query-key prefixes (the page refetches).
import { useMutation, useQueryClient } from '@tanstack/preact-query';

export function useAction<I, O>(fn: (input: I) => Promise<O>, invalidate: unknown[][] = [], onDone?: (out: O) => void) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: fn,
    onSuccess: async (out) => {
      onDone?.(out);
      await Promise.all(invalidate.map((queryKey) => client.invalidateQueries({ queryKey })));
    },
  });
}
