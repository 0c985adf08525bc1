import { z } from 'zod';
import { NETWORK_IDS, TOKEN_SYMBOLS, type NetworkId, type TokenSymbol } from '../../../chains/vocabulary.js';

// Building blocks of the response schemas (docs/openapi.md): each serializer declares the exact shape it answers
// with, and the OpenAPI document is generated from those declarations, so a serializer and its documentation cannot
// drift apart without a test noticing (the test client checks every response against the document).

/** Unix seconds. */
export const unixTime = z.number().int().meta({ description: 'Unix time in seconds.' });
/** Integer minor units (1 USDT = 100). */
export const minorUnits = z.number().int().meta({ description: 'Integer amount in minor units (2 decimals: 1 USDT = 100).' });
/** A decimal string at the currency's exponent, e.g. "12.34". */
export const decimalString = z
  .string()
  .regex(/^\d+(\.\d+)?$/)
  .meta({ description: 'Decimal string at the currency exponent, e.g. "12.34".' });
export const metadataOut = z.record(z.string(), z.string());
export const networkId = z.enum(NETWORK_IDS as [NetworkId, ...NetworkId[]]);
export const tokenSymbol = z.enum(TOKEN_SYMBOLS as [TokenSymbol, ...TokenSymbol[]]);
