import { type Contract, ContractFactory, type Signer } from 'ethers';
import { compileTestContracts } from './compile.js';

// Deploys the token shapes of docs/testing.md ("Ethereum, BSC") on a local node.

export type TokenShape = 'tether' | 'fiat';

export async function deployToken(deployer: Signer, shape: TokenShape, symbol: string, decimals: number): Promise<Contract> {
  const compiled = compileTestContracts();
  const c = compiled[shape === 'tether' ? 'TetherStyleToken' : 'FiatTokenStyle']!;
  const factory = new ContractFactory(c.abi as never, c.bytecode, deployer);
  const contract = await factory.deploy(`${symbol} (${shape})`, symbol, decimals);
  await contract.waitForDeployment();
  return contract as Contract;
}

export async function deployBatcher(deployer: Signer): Promise<Contract> {
  const c = compileTestContracts().TransferBatcher!;
  const contract = await new ContractFactory(c.abi as never, c.bytecode, deployer).deploy();
  await contract.waitForDeployment();
  return contract as Contract;
}

/** Mints (FiatToken `mint`, Tether `issue`) to `to`. */
export async function mintTo(token: Contract, shape: TokenShape, to: string, amount: bigint): Promise<void> {
  const fn = shape === 'tether' ? 'issue' : 'mint';
  const tx = await (token.getFunction(fn) as (a: string, b: bigint) => Promise<{ wait(): Promise<unknown> }>)(to, amount);
  await tx.wait();
}
