import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLIENT_TYPES_FILE, generateClientTypes } from '../../scripts/tools/gen-client-types.js';

// The client package's types are generated from the OpenAPI document: the committed file must be what the generator
// writes now (run `npx tsx scripts/tools/gen-client-types.ts` after changing a route's or serializer's schema).
describe('packages/client types', () => {
  it("are the OpenAPI document's, regenerated", () => {
    const generated = generateClientTypes();
    expect(generated).toContain('export type PaymentSession = {');
    expect(generated).toContain('export type WebhookEvent = EventPaymentCompleted |');
    expect(readFileSync(CLIENT_TYPES_FILE, 'utf8')).toBe(generated);
  });
});
