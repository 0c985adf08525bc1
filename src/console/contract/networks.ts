import { z } from 'zod';

// GET /api/networks: the networks and tokens this deployment is configured for.
export const configuredNetworkSchema = z.object({
  network: z.string(),
  mode: z.enum(['test', 'live']),
  tokens: z.array(z.object({ symbol: z.string(), decimals: z.number().int() })),
});
export type ConfiguredNetwork = z.infer<typeof configuredNetworkSchema>;
export const networksResponseSchema = z.object({ data: z.array(configuredNetworkSchema) });
