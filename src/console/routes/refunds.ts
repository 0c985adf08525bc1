import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { NETWORK_IDS, type NetworkId } from '../../../chains/vocabulary.js';
import { reportingRead } from '../../operations/reporting.js';
import { findRefund, listConsoleRefunds, refundDetail } from '../../operations/refunds.js';
import { retryRefund, settleRefundFromChain } from '../../operations/refunds-actions.js';
import { refundView } from '../../operations/refunds-view.js';
import { assertOwns, merchantScope } from '../actor.js';
import {
  type RefundDetail,
  type RefundList,
  type RefundRetryResult,
  type RefundSettleResult,
  refundDetailSchema,
  refundListSchema,
  refundRetryResultSchema,
  refundSettleResultSchema,
} from '../contract/refunds.js';
import type { ConsoleDeps } from '../deps.js';
import { consoleRoute } from '../route.js';
import { isoQuery, limitQuery } from './payments.js';

// The console's refunds (src/console/contract/refunds.ts): the list, one refund with its on-chain attempts, the retry
// of a failed refund (the CLI's `payouts retry`) and, for operators, `payouts settle-from-chain`.

const id = z.strictObject({ id: z.string().min(1).max(64) });

const listQuery = z.strictObject({
  limit: limitQuery,
  cursor: z.string().min(1).max(200).optional(),
  sort: z.literal('created_at').default('created_at'),
  order: z.enum(['asc', 'desc']).default('desc'),
  status: z.enum(['pending', 'processing', 'completed', 'failed', 'canceled']).optional(),
  network: z.enum(NETWORK_IDS as [NetworkId, ...NetworkId[]]).optional(),
  merchant_id: z.string().min(1).max(64).optional(),
  created_from: isoQuery.optional(),
  created_to: isoQuery.optional(),
});

export function registerRefundRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  const { ops } = deps;
  const actionDeps = { db: ops.db, chains: async () => ops.chains, enqueuePayout: ops.enqueuePayout };

  consoleRoute(app, ops.db, {
    method: 'GET',
    url: '/refunds',
    summary: 'Refunds',
    response: refundListSchema,
    query: listQuery,
    handler: async ({ actor, query }): Promise<RefundList> =>
      reportingRead(ops, (db) =>
        listConsoleRefunds(
          { ...ops, db },
          {
            merchantId: merchantScope(actor, query.merchant_id),
            status: query.status,
            network: query.network,
            createdFrom: query.created_from,
            createdTo: query.created_to,
            order: query.order,
            limit: query.limit,
            cursor: query.cursor,
          },
        ),
      ),
  });

  consoleRoute(app, ops.db, {
    method: 'GET',
    url: '/refunds/:id',
    summary: 'One refund with its on-chain attempts',
    response: refundDetailSchema,
    params: id,
    handler: async ({ actor, params }): Promise<RefundDetail> => {
      const r = await findRefund(ops, params.id);
      assertOwns(actor, r.merchant_id);
      return refundDetail(ops, r);
    },
  });

  consoleRoute(app, ops.db, {
    method: 'POST',
    url: '/refunds/:id/retry',
    summary: 'Retry a failed refund',
    response: refundRetryResultSchema,
    status: [201],
    errors: { 400: ['refund_not_failed'] },
    params: id,
    handler: async ({ actor, params, audit, reply }): Promise<RefundRetryResult> => {
      const old = await findRefund(ops, params.id);
      assertOwns(actor, old.merchant_id);
      const { retried, refund } = await retryRefund(actionDeps, old);
      await audit({
        action: 'refund.retry',
        objectType: 'refund',
        objectId: old.id,
        merchantId: old.merchant_id,
        before: { status: old.status },
        after: { retry_id: refund.id, refund_id: refund.refund_id, status: refund.status },
      });
      reply.code(201);
      return { retried, refund: refundView(refund, ops.chains) };
    },
  });

  consoleRoute(app, ops.db, {
    method: 'POST',
    url: '/refunds/:id/settle-from-chain',
    summary: 'Settle a refund from a transaction on chain',
    response: refundSettleResultSchema,
    role: 'operator',
    errors: {
      400: [
        'keys_not_configured',
        'network_not_configured',
        'refund_in_flight',
        'refund_not_open',
        'transaction_already_recorded',
        'transaction_not_a_payout',
        'transaction_not_final',
      ],
    },
    params: id,
    body: z.strictObject({ tx_hash: z.string().min(1).max(200) }),
    handler: async ({ actor, params, body, audit }): Promise<RefundSettleResult> => {
      const refund = await findRefund(ops, params.id);
      const r = await settleRefundFromChain({ ...actionDeps, keys: ops.keys }, refund, body.tx_hash, actor.email);
      await audit({
        action: 'refund.settle_from_chain',
        objectType: 'refund',
        objectId: refund.id,
        merchantId: refund.merchant_id,
        before: { status: refund.status },
        after: { tx_hash: r.txHash, delivered_base: r.deliveredBase.toString() },
      });
      return { refund: refundView(refund, ops.chains), tx_hash: r.txHash, delivered_base: r.deliveredBase.toString() };
    },
  });
}
