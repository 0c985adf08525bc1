import type { SystemContractValue } from '../../../chains/tron/system-contracts.js';
import { tronBase58 } from '../../../chains/tron/address.js';
import { BroadcastRefusal } from './refusal.js';
import { TRX, newAccount, type FakeAccount, type ResourceBook } from './resources.js';

/** What the system contracts read and change of the fake chain (FakeTronChain has it). */
export interface SystemContractChain {
  readonly accounts: Map<string, FakeAccount>;
  readonly resources: ResourceBook;
  readonly createNewAccountFeeSun: bigint;
  chargeBandwidth(a: FakeAccount, bytes: bigint, createsAccount: boolean): { netFee: bigint; netUsage: bigint };
}

// THIS IS A FAKE. The system contracts the fake java-tron executes besides TriggerSmartContract, with java-tron's
// validation messages (its actuators: TransferActuator, FreezeBalanceV2Actuator, DelegateResourceActuator,
// UnDelegateResourceActuator). `validateSystemContract` runs at build time too: java-tron's HTTP builders refuse an
// invalid contract with {"Error": "class org.tron.core.exception.ContractValidateException : ..."}.

const refuse = (m: string): never => {
  throw new BroadcastRefusal('CONTRACT_VALIDATE_ERROR', m);
};

/** Throws BroadcastRefusal(CONTRACT_VALIDATE_ERROR) as java-tron's actuator validation would. */
export function validateSystemContract(chain: SystemContractChain, v: SystemContractValue): void {
  const owner = chain.accounts.get(v.owner);
  const name = v.name;
  if (!owner) refuse(`Validate ${name} error, no OwnerAccount.`);
  const o = owner!;
  switch (name) {
    case 'TransferContract': {
      if (v.amount <= 0n) refuse('Amount must be greater than 0.');
      if (v.to === v.owner) refuse('Cannot transfer TRX to yourself.');
      const fee = chain.accounts.has(v.to) ? 0n : chain.createNewAccountFeeSun;
      if (o.balanceSun < v.amount + fee) refuse('Validate TransferContract error, balance is not sufficient.');
      return;
    }
    case 'FreezeBalanceV2Contract':
      if (v.amount < TRX) refuse('frozenBalance must be greater than or equal to 1 TRX');
      if (v.amount > o.balanceSun) refuse('frozenBalance must be less than or equal to accountBalance');
      return;
    case 'DelegateResourceContract': {
      if (v.amount < TRX) refuse('delegateBalance must be greater than or equal to 1 TRX');
      const max = chain.resources.canDelegateMax(o, v.resource);
      if (v.amount > max)
        refuse(
          `delegateBalance must be less than or equal to available ${v.resource === 'ENERGY' ? 'FreezeEnergyV2' : 'FreezeBandwidthV2'} balance`,
        );
      if (v.to === v.owner) refuse('receiverAddress must not be the same as ownerAddress');
      if (!chain.accounts.has(v.to)) refuse(`Account[${tronBase58(v.to)}] not exists`);
      if (v.lock) refuse('fake java-tron: lock is not modelled');
      return;
    }
    case 'UnDelegateResourceContract': {
      if (v.amount <= 0n) refuse('unDelegateBalance must be more than 0 TRX');
      const d = chain.resources.delegated(v.owner, v.to);
      const held = v.resource === 'ENERGY' ? d.energySun : d.bandwidthSun;
      if (held === 0n) refuse(`delegated Resource does not exist`);
      // UnDelegateResourceActuator's two spellings, as java-tron writes them.
      if (held < v.amount)
        refuse(
          v.resource === 'ENERGY'
            ? `insufficient delegateFrozenBalance(Energy), request=${v.amount}, unlock_balance=${held}`
            : `insufficient delegatedFrozenBalance(BANDWIDTH), request=${v.amount}, unlock_balance=${held}`,
        );
      return;
    }
    default: {
      const never: never = name;
      return never;
    }
  }
}

/** Validates, charges bandwidth (and account creation), applies. Fee = TRX burned. */
export function executeSystemContract(
  chain: SystemContractChain,
  v: SystemContractValue,
  bytes: bigint,
): { fee: bigint; netFee: bigint; netUsage: bigint } {
  validateSystemContract(chain, v);
  const o = chain.accounts.get(v.owner)!;
  const creates = v.name === 'TransferContract' && !chain.accounts.has(v.to);
  const net = chain.chargeBandwidth(o, bytes, creates);
  let fee = net.netFee;
  switch (v.name) {
    case 'TransferContract': {
      if (creates) {
        o.balanceSun -= chain.createNewAccountFeeSun;
        fee += chain.createNewAccountFeeSun;
        chain.accounts.set(v.to, newAccount());
      }
      if (o.balanceSun < v.amount) refuse('Validate TransferContract error, balance is not sufficient.');
      o.balanceSun -= v.amount;
      chain.accounts.get(v.to)!.balanceSun += v.amount;
      break;
    }
    case 'FreezeBalanceV2Contract':
      o.balanceSun -= v.amount;
      if (v.resource === 'ENERGY') o.frozenEnergySun += v.amount;
      else o.frozenBandwidthSun += v.amount;
      break;
    case 'DelegateResourceContract':
      chain.resources.delegate(v.owner, o, v.to, chain.accounts.get(v.to)!, v.resource, v.amount);
      break;
    case 'UnDelegateResourceContract':
      chain.resources.undelegate(v.owner, o, v.to, chain.accounts.get(v.to)!, v.resource, v.amount);
      break;
  }
  return { fee, netFee: net.netFee, netUsage: net.netUsage };
}
