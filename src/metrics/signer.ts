import { REFUSAL_CODES, SIGNING_PURPOSES } from '../domain/signing.js';
import { metrics } from './registry.js';

// The signer role (docs/signer.md): what it signed and refused (in the signer process), and the sends that wait for
// it (in the workers). Labels are closed vocabularies: purpose and refusal code, never a merchant or an address.

const OUTCOMES = ['signed', 'refused'] as const;
const WAIT_CAUSES = ['unavailable', 'refused'] as const;

const requests = metrics.counter<'purpose' | 'outcome' | 'code'>({
  name: 'stablepay_signer_requests_total',
  help: 'Signature requests the signer answered, by purpose and outcome; refusals by reason code (docs/signer.md).',
  labels: ['purpose', 'outcome', 'code'],
  values: { purpose: SIGNING_PURPOSES, outcome: OUTCOMES, code: ['none', ...REFUSAL_CODES] },
});

const paused = metrics.gauge<never>({
  name: 'stablepay_signer_paused',
  help: '1 while the signer is paused (`signer pause`): it signs nothing until `signer resume`.',
  labels: [],
  values: {},
});

const waits = metrics.counter<'purpose' | 'cause'>({
  name: 'stablepay_outbound_signer_waits_total',
  help: 'Sends that waited because the signer was unavailable or refused (the send waits; it never fails for it).',
  labels: ['purpose', 'cause'],
  values: { purpose: SIGNING_PURPOSES, cause: WAIT_CAUSES },
});

export function recordSignerAnswer(purpose: string, outcome: (typeof OUTCOMES)[number], code: string | null): void {
  requests.inc({ purpose, outcome, code: code ?? 'none' });
}

export function setSignerPaused(on: boolean): void {
  paused.set({}, on ? 1 : 0);
}

export function recordSignerWait(purpose: string, cause: (typeof WAIT_CAUSES)[number]): void {
  waits.inc({ purpose, cause });
}
