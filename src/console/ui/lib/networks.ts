// The deployment's configured networks (GET api/networks): the pages' choices start on one that is here.
import { useQuery } from '@tanstack/preact-query';
import type { ConfiguredNetwork } from '../../contract/networks.js';
import { api } from './api.js';

export function useNetworks(): { list: ConfiguredNetwork[] | undefined; first: ConfiguredNetwork | undefined } {
  const q = useQuery({ queryKey: ['networks'], queryFn: () => api.get<{ data: ConfiguredNetwork[] }>('networks'), staleTime: 60_000 });
  return { list: q.data?.data, first: q.data?.data[0] };
}
