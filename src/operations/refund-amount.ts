import { STABLECOIN_EXPONENT } from '../../chains/vocabulary.js';
import { invalidRequest } from '../domain/errors.js';
import { InvalidAmountError, parseDecimalToMinor } from '../domain/money.js';

/**
 * A refund amount typed in the console ("12.50", in the token): its minor units, or undefined when none was given.
 * Anything but a positive amount of at most 2 decimals is refused with the public API's code, INVALID_AMOUNT.
 */
export function refundAmountMinor(amount: string | undefined): bigint | undefined {
  if (amount === undefined) return undefined;
  let minor: bigint | undefined;
  try {
    minor = parseDecimalToMinor(amount, STABLECOIN_EXPONENT);
  } catch (e) {
    if (!(e instanceof InvalidAmountError)) throw e;
  }
  if (minor === undefined || minor <= 0n)
    throw invalidRequest('INVALID_AMOUNT', 'amount must be a positive amount of the token, at most 2 decimals (e.g. "12.50").', 'amount');
  return minor;
}
