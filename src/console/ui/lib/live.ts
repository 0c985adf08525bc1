// Live updates: one EventSource per open page on api/live?topics=..., `event: change` with {"topic": "..."}; each
// change invalidates the queries whose key starts with the topic's area (debounced 200 ms).
import { useQueryClient } from '@tanstack/preact-query';
import { useEffect } from 'preact/hooks';

/** Query-key prefixes a topic invalidates: `payment:<id>` → ['payment', id], `sweep:<id>` → ['sweep', id]. */
export function keysForTopic(topic: string): unknown[][] {
  const [area, id] = topic.split(':', 2);
  if (area === 'payment' && id) return [['payment', id]];
  if (area === 'sweep' && id) return [['sweep', id]];
  if (area === 'payments') return [['payments'], ['stranded']];
  if (area === 'overview') return [['overview']];
  if (area === 'refunds') return [['refunds'], ['refund']];
  if (area === 'sweeps') return [['sweeps']];
  return [];
}

export function useLive(topics: string[]): void {
  const client = useQueryClient();
  const key = topics.join(',');
  useEffect(() => {
    if (!key || typeof EventSource === 'undefined') return;
    const source = new EventSource(`api/live?topics=${encodeURIComponent(key)}`, { withCredentials: true });
    const pending = new Set<string>();
    let timer: ReturnType<typeof setTimeout> | null = null;
    const flush = () => {
      timer = null;
      for (const topic of pending) for (const queryKey of keysForTopic(topic)) void client.invalidateQueries({ queryKey });
      pending.clear();
    };
    // Once the stream is in place, read the views once more: what committed between the page's first read and the
    // stream's start is not missed.
    source.addEventListener('ready', () => {
      for (const topic of key.split(',')) pending.add(topic);
      if (!timer) timer = setTimeout(flush, 0);
    });
    source.addEventListener('change', (ev) => {
      try {
        const { topic } = JSON.parse((ev as MessageEvent<string>).data) as { topic?: string };
        if (typeof topic !== 'string') return;
        pending.add(topic);
        if (!timer) timer = setTimeout(flush, 200);
      } catch {
        // ignore a malformed event
      }
    });
    return () => {
      if (timer) clearTimeout(timer);
      source.close();
    };
  }, [key, client]);
}
