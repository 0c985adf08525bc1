import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { NETWORK_IDS, type NetworkId } from '../../../chains/vocabulary.js';
import { refundAmountMinor } from '../../operations/refund-amount.js';
import { listStranded } from '../../operations/stranded.js';
import { previewStrandedRefund, refundStranded, strandedSource } from '../../operations/stranded-refund.js';
import { refundView } from '../../operations/refunds-view.js';
import { assertOwns, merchantScope } from '../actor.js';
import {
  type StrandedList,
  type StrandedPreview,
  type StrandedRefundResult,
  strandedListSchema,
  strandedRefundAnswerSchema,
} from '../contract/stranded.js';
import type { ConsoleDeps } from '../deps.js';
import { consoleRoute } from '../route.js';
import { OPERATION_ERRORS } from '../../api/openapi/error-catalog.js';
import { limitQuery } from './payments.js';

// Stranded money (src/console/contract/stranded.ts): unmatched deposits and what closed-unpaid sessions received, and
// their refund (the CLI's `deposits refund` / `sessions refund-received`) after a preview that changes nothing.

const listQuery = z.strictObject({
  kind: z.enum(['deposit', 'session']).default('deposit'),
  limit: limitQuery,
  cursor: z.string().min(1).max(200).optional(),
  network: z.enum(NETWORK_IDS as [NetworkId, ...NetworkId[]]).optional(),
  mode: z.enum(['test', 'live']).optional(),
  merchant_id: z.string().min(1).max(64).optional(),
});

const refundBody = z.strictObject({
  destination: z.string().min(1).max(200).optional(),
  amount: z.string().max(40).optional(),
  confirm: z.boolean().optional(),
});

export function registerStrandedRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  const { ops } = deps;

  consoleRoute(app, ops.db, {
    method: 'GET',
    url: '/stranded',
    summary: 'Stranded money: unmatched deposits and what expired or canceled sessions received',
    response: strandedListSchema,
    query: listQuery,
    handler: async ({ actor, query }): Promise<StrandedList> =>
      listStranded(ops, {
        kind: query.kind,
        merchantId: merchantScope(actor, query.merchant_id),
        network: query.network,
        mode: query.mode,
        limit: query.limit,
        cursor: query.cursor,
      }),
  });

  consoleRoute(app, ops.db, {
    method: 'POST',
    url: '/stranded/:kind/:id/refund',
    summary: 'Refund stranded money: a preview, then with confirm the refund',
    response: strandedRefundAnswerSchema,
    errors: { 400: [...OPERATION_ERRORS.createRefund[400], 'parameter_missing'], 429: OPERATION_ERRORS.createRefund[429] },
    params: z.strictObject({ kind: z.enum(['deposit', 'session']), id: z.string().min(1).max(80) }),
    body: refundBody,
    handler: async ({ actor, params, body, audit }): Promise<StrandedPreview | StrandedRefundResult> => {
      const amountMinor = refundAmountMinor(body.amount);
      const input = {
        amountMinor,
        amountText: body.amount,
        to: body.destination,
        initiatedBy: actor.role === 'operator' ? 'operator_console' : 'merchant_console',
      };
      const found = await strandedSource(ops, params.kind, params.id);
      assertOwns(actor, found.merchantId);
      const preview = await previewStrandedRefund(ops, params.kind, params.id, input, found);
      if (body.confirm !== true) {
        return { preview: true, amount: preview.amount, token: preview.token, network: preview.network, destination: preview.destination };
      }
      const result = await refundStranded(ops, params.kind, params.id, input, preview.found);
      const view = refundView(result.refund, ops.chains);
      await audit({
        action: params.kind === 'deposit' ? 'deposit.refund' : 'session.refund_received',
        objectType: params.kind === 'deposit' ? 'deposit' : 'payment_session',
        objectId: params.id,
        merchantId: preview.found.merchantId,
        after: {
          refund: view.id,
          refund_id: view.refund_id,
          amount: view.amount,
          token: view.token,
          network: view.network,
          destination: view.destination_address,
          replayed: result.kind === 'replayed',
        },
      });
      return { preview: false, replayed: result.kind === 'replayed', refund: view };
    },
  });
}
