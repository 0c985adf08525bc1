import { NETWORK_IDS } from '../../../chains/vocabulary.js';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { STABLECOIN_EXPONENT } from '../../../chains/vocabulary.js';
import { parseDecimalToMinor } from '../../domain/money.js';
import { getSweepPolicy, listDestinations, putSweepPolicy, setDestination } from '../../operations/treasury.js';
import { destinationList, destinationSet, setDestinationBody, setPolicyBody, sweepPolicy } from '../contract/treasury.js';
import type { ConsoleDeps } from '../deps.js';
import { consoleRoute } from '../route.js';

// Treasury routes (operators): destinations of swept funds with their history, and sweep policies.

const network = z.enum(NETWORK_IDS);
const mode = z.enum(['test', 'live']);

export async function registerTreasuryRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const { db } = deps.ops;
  consoleRoute(app, db, {
    method: 'GET',
    url: '/treasury/destinations',
    summary: 'Treasury destinations and hot floats, with their history',
    response: destinationList,
    role: 'operator',
    query: z.strictObject({ merchant_id: z.string().min(1).max(64).optional() }),
    handler: async ({ query }) => ({ data: await listDestinations(db, query.merchant_id) }),
  });
  consoleRoute(app, db, {
    method: 'POST',
    url: '/treasury/destinations',
    summary: "Set where a merchant's sweeps go, and its hot float",
    response: destinationSet,
    errors: { 400: ['address_invalid'], 409: ['network_not_configured'] },
    role: 'operator',
    body: setDestinationBody,
    handler: async ({ body, actor, audit }) => {
      const address = body.address === null || body.address === 'none' ? null : body.address;
      const before = (await listDestinations(db, body.merchant_id)).find((x) => x.network === body.network && x.mode === body.mode);
      const out = await setDestination(db, deps.ops.chains, {
        merchantId: body.merchant_id,
        network: body.network,
        mode: body.mode,
        address,
        ...(body.hot_float !== undefined ? { hotFloatMinor: parseDecimalToMinor(body.hot_float, STABLECOIN_EXPONENT) } : {}),
        actor: `console:${actor.email}`,
      });
      await audit({
        action: 'treasury_destination.set',
        objectType: 'treasury_destination',
        objectId: `${body.merchant_id}/${body.network}/${body.mode}`,
        merchantId: body.merchant_id,
        before: before ? { treasury_address: before.treasury_address, hot_float: before.hot_float } : null,
        after: { treasury_address: out.treasury_address, hot_float: out.hot_float },
      });
      return out;
    },
  });
  consoleRoute(app, db, {
    method: 'GET',
    url: '/sweeps/policy',
    summary: 'The sweep policy of a network, mode and token',
    response: sweepPolicy,
    role: 'operator',
    errors: { 409: ['network_not_configured'] },
    query: z.strictObject({ network, mode, token: z.enum(['USDT', 'USDC']) }),
    handler: async ({ query }) => getSweepPolicy(db, deps.ops.chains, query.network, query.mode, query.token),
  });
  consoleRoute(app, db, {
    method: 'POST',
    url: '/sweeps/policy',
    summary: 'Set a sweep policy',
    response: sweepPolicy,
    role: 'operator',
    errors: { 409: ['network_not_configured'] },
    body: setPolicyBody,
    handler: async ({ body, actor, audit }) => {
      const r = await putSweepPolicy(db, deps.ops.chains, {
        network: body.network,
        mode: body.mode,
        token: body.token,
        minMinor: parseDecimalToMinor(body.min_amount, STABLECOIN_EXPONENT),
        maxFeeBps: body.max_fee_bps,
        actor: `console:${actor.email}`,
      });
      await audit({
        action: 'sweep_policy.set',
        objectType: 'sweep_policy',
        objectId: `${body.network}/${body.mode}/${body.token}`,
        merchantId: null,
        before: r.before,
        after: r.after,
      });
      return r.after;
    },
  });
}
