import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { SigningKey, computeAddress, hexlify } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evmHexToTron } from '../../chains/tron/address.js';
import { buildSystemStep } from '../../chains/tron/sweep-common.js';
import { UNDELEGATE_GONE } from '../../chains/tron/sweep-energy.js';
import { TronTokenSender } from '../../chains/tron/token-sender.js';
import { TronWalletApi } from '../../chains/tron/wallet-api.js';
import type { SweepRequest, SweepStep } from '../../chains/types.js';
import { startFakeJavaTron, type FakeJavaTron } from '../../scripts/devnet/fake-java-tron/server.js';
import { startAnvil, type AnvilNode } from '../support/anvil.js';

// A sweep's `undelegate` step replayed after its delegation was (partly) taken back: java-tron refuses it with
// "insufficient delegateFrozenBalance(Energy), request=..., unlock_balance=..." (UnDelegateResourceActuator; fixture
// test/fixtures/java-tron/undelegateresource.insufficient.json). The step builder must read that refusal as "nothing
// left to do" (null), as it reads "delegated Resource does not exist", not fail the sweep.

const fixture = JSON.parse(readFileSync('test/fixtures/java-tron/undelegateresource.insufficient.json', 'utf8')) as {
  response: { Error: string };
};

describe('TRON undelegate step against java-tron refusals', () => {
  let node: AnvilNode;
  let fake: FakeJavaTron;
  let sender: TronTokenSender;
  const owner = evmHexToTron(computeAddress(new SigningKey(hexlify(randomBytes(32))).publicKey));
  const receiver = evmHexToTron(computeAddress(new SigningKey(hexlify(randomBytes(32))).publicKey));

  beforeAll(async () => {
    node = await startAnvil({ chainId: 0x2b6653dc });
    fake = await startFakeJavaTron(node, { solidifyDepth: 1 });
    fake.chain.setTrx(owner, 100_000_000_000n);
    fake.chain.setTrx(receiver, 1_000_000n);
    const a = fake.chain.account(owner)!;
    a.balanceSun -= 50_000_000_000n;
    a.frozenEnergySun += 50_000_000_000n;
    fake.chain.resources.delegate(owner, a, receiver, fake.chain.account(receiver)!, 'ENERGY', 2_000_000n);
    sender = new TronTokenSender({
      api: new TronWalletApi({ fullHost: fake.url }),
      tokens: [],
      feeLimitCeilingSun: 100_000_000n,
      energyMarginPercent: 20,
    });
  });

  afterAll(async () => {
    await fake?.close();
    await node?.stop();
  });

  const step = { from: { address: owner, key: { slot: 'resources' } }, to: receiver, estimatedFee: 0n } as unknown as SweepStep;
  const request = {} as SweepRequest;

  it("matches java-tron's refusal texts of an undelegation with nothing left", () => {
    expect(UNDELEGATE_GONE.test(fixture.response.Error)).toBe(true);
    expect(UNDELEGATE_GONE.test('class org.tron.core.exception.ContractValidateException : delegated Resource does not exist')).toBe(true);
    expect(UNDELEGATE_GONE.test('class org.tron.core.exception.ContractValidateException : Invalid receiverAddress')).toBe(false);
  });

  it('an undelegation of more than is still delegated builds nothing (the step is done)', async () => {
    expect(await buildSystemStep(sender, request, step, 'UnDelegateResourceContract', 3_000_000n, UNDELEGATE_GONE)).toBeNull();
  });

  it('an undelegation within the delegation builds the transaction', async () => {
    const built = await buildSystemStep(sender, request, step, 'UnDelegateResourceContract', 2_000_000n, UNDELEGATE_GONE);
    expect(built?.body.system?.contract).toBe('UnDelegateResourceContract');
  });
});
