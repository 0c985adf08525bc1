import { HDNodeWallet } from 'ethers';
import { DEVNET_MNEMONIC, DEVNET_PAYER_PATH } from '../../src/cli/devnet.js';
import { TronWeb } from 'tronweb';
import type { ChainFactory, PayerChain } from './chain.js';
import { payerSecretNames } from './chain.js';
import type { TokenSpec } from './profiles.js';

// TRON Nile through its HTTP wallet API (TronWeb): TRC-20 calls built by the node, signed here, broadcast, and the
// receipt read back (SUCCESS, or the failure is the step's error). The chain id is java-tron's eth_chainId.
// With `--local` the same calls go to the demo's FAKE java-tron (scripts/devnet/fake-java-tron); the payer is the devnet
// payer, eth_chainId is asked of the demo's Anvil node, and TRX comes from the demo's faucet (the fake executes
// TriggerSmartContract only, not TRX transfers).

export const createTronChain: ChainFactory = async (profile, env) => {
  const headers = Object.keys(profile.rpcHeaders).length ? profile.rpcHeaders : undefined;
  const privateKey = profile.local
    ? HDNodeWallet.fromPhrase(DEVNET_MNEMONIC, undefined, DEVNET_PAYER_PATH).privateKey.slice(2)
    : payerKey(payerSecretNames(profile), env);
  const tronWeb = new TronWeb({ fullHost: profile.rpcUrl, headers, privateKey });
  const payer = tronWeb.defaultAddress.base58 as string;

  const receipt = async (txID: string): Promise<string> => {
    for (let i = 0; i < 100; i++) {
      const info = (await tronWeb.trx.getUnconfirmedTransactionInfo(txID)) as { id?: string; receipt?: { result?: string } };
      if (info.id) {
        // A TRX transfer has no contract receipt; a TRC-20 call must say SUCCESS.
        if (info.receipt?.result !== undefined && info.receipt.result !== 'SUCCESS')
          throw new Error(`transaction ${txID} failed on chain: ${info.receipt.result}`);
        return txID;
      }
      await new Promise((r) => setTimeout(r, 3000));
    }
    throw new Error(`transaction ${txID} not in a block after 5 minutes`);
  };
  const broadcast = async (tx: unknown): Promise<string> => {
    const signed = (await tronWeb.trx.sign(tx as never)) as { txID: string };
    const sent = (await tronWeb.trx.sendRawTransaction(signed as never)) as { result?: boolean; code?: string; message?: string };
    if (!sent.result)
      throw new Error(
        `broadcast refused: ${sent.code ?? ''} ${sent.message ? Buffer.from(sent.message, 'hex').toString('utf8') : ''}`.trim(),
      );
    return receipt(signed.txID);
  };
  const call = async (t: TokenSpec, fn: string, params: Array<{ type: string; value: string }>): Promise<string> => {
    const built = await tronWeb.transactionBuilder.triggerSmartContract(t.address, fn, { feeLimit: 50_000_000 }, params, payer);
    return broadcast(built.transaction);
  };
  const constant = async (t: TokenSpec, fn: string, params: Array<{ type: string; value: string }>): Promise<bigint> => {
    const r = await tronWeb.transactionBuilder.triggerConstantContract(t.address, fn, {}, params, payer);
    return BigInt(`0x${r.constant_result?.[0] || '0'}`);
  };

  const chain: PayerChain = {
    payer,
    async identity() {
      const res = await fetch(profile.jsonRpcUrl ?? `${profile.rpcUrl}/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...profile.rpcHeaders },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      });
      const body = (await res.json()) as { result?: string };
      if (!body.result) throw new Error(`eth_chainId answered ${JSON.stringify(body)}`);
      return { value: BigInt(body.result).toString(), method: 'eth_chainId (java-tron /jsonrpc)' };
    },
    async tokenDecimals(t) {
      // java-tron refuses a constant call to an address without code (CONTRACT_VALIDATE_ERROR): no contract there.
      const r = (await tronWeb.transactionBuilder.triggerConstantContract(t.address, 'decimals()', {}, [], payer).catch(() => null)) as {
        constant_result?: string[];
      } | null;
      const word = r?.constant_result?.[0];
      return word ? Number(BigInt(`0x${word}`)) : null;
    },
    tokenBalance: (t, owner) => constant(t, 'balanceOf(address)', [{ type: 'address', value: owner }]),
    // What the wallet can spend now: the full node's account (`wallet/getaccount`), as EVM's latest balance. tronweb's
    // getBalance reads the solidity node (`walletsolidity/getaccount`), about a minute behind on Nile and 3 blocks
    // behind on the demo's fake: a wallet funded just before the run read 0 there and failed the preflight.
    nativeBalance: async (owner) => BigInt(await tronWeb.trx.getUnconfirmedBalance(owner)),
    pay: (t, to, amount) =>
      call(t, 'transfer(address,uint256)', [
        { type: 'address', value: to },
        { type: 'uint256', value: amount.toString() },
      ]),
    transferToken: (t, to, amount) =>
      call(t, 'transfer(address,uint256)', [
        { type: 'address', value: to },
        { type: 'uint256', value: amount.toString() },
      ]),
    async sendNative(to, sun) {
      if (profile.trxFaucetUrl) return fromFaucet(profile.trxFaucetUrl, to, sun);
      return broadcast(await tronWeb.transactionBuilder.sendTrx(to, Number(sun), payer));
    },
    async authorize(t, spender, amount, o) {
      // The page prepares TRON approvals (TronLink signs what /wallet/triggersmartcontract built); sign those.
      if (o.walletTransactions.length) {
        const out: string[] = [];
        for (const w of o.walletTransactions) out.push(await broadcast((w as { transaction: unknown }).transaction));
        return out;
      }
      const out: string[] = [];
      if (o.resetFirst)
        out.push(
          await call(t, 'approve(address,uint256)', [
            { type: 'address', value: spender },
            { type: 'uint256', value: '0' },
          ]),
        );
      out.push(
        await call(t, 'approve(address,uint256)', [
          { type: 'address', value: spender },
          { type: 'uint256', value: amount.toString() },
        ]),
      );
      return out;
    },
    async succeeded(txID) {
      const info = (await tronWeb.trx.getTransactionInfo(txID.replace(/^0x/, ''))) as {
        id?: string;
        blockNumber?: number;
        result?: string;
        receipt?: { result?: string };
      };
      // A contract call's receipt says SUCCESS; a TRX transfer (a sweep's fund step) has no receipt result, and
      // java-tron marks a failed transaction `result: FAILED`. Unknown or not in a block: not succeeded.
      if (!info.id || info.blockNumber === undefined || info.result === 'FAILED') return false;
      return info.receipt?.result === undefined || info.receipt.result === 'SUCCESS';
    },
    async close() {},
  };
  return chain;
};

/** TRX from the demo's faucet; what it answers stands where a transaction id would (the fake has no TRX transfer). */
async function fromFaucet(url: string, to: string, sun: bigint): Promise<string> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ to, sun: sun.toString() }),
  });
  const body = (await res.json().catch(() => ({}))) as { transfer_id?: string; error?: string };
  if (res.status !== 200 || !body.transfer_id) throw new Error(`demo TRX faucet refused: ${body.error ?? `HTTP ${res.status}`}`);
  return body.transfer_id;
}

/** `TRON_NILE_PAYER_KEY` (hex) or `TRON_NILE_PAYER_MNEMONIC` (m/44'/195'/0'/0/0, as TronLink derives it). */
function payerKey(names: string[], env: Record<string, string | undefined>): string {
  const [keyName, mnemonicName] = names as [string, string];
  const key = env[keyName]?.trim();
  if (key) {
    if (!/^(0x)?[0-9a-fA-F]{64}$/.test(key)) throw new Error(`${keyName} must be 32 bytes of hex`);
    return key.replace(/^0x/, '');
  }
  const phrase = env[mnemonicName]?.trim();
  if (!phrase) throw new Error(`no payer wallet: set ${keyName} (hex private key) or ${mnemonicName}`);
  try {
    return HDNodeWallet.fromPhrase(phrase, undefined, "m/44'/195'/0'/0/0").privateKey.slice(2);
  } catch {
    throw new Error(`${mnemonicName} is not a valid BIP39 mnemonic`);
  }
}
