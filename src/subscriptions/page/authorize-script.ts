// The page's script, served from /subscribe/assets/authorize.js. One flow per wallet family:
// - EVM (EIP-1193, window.ethereum): connect, switch chain when asked, approve (after a reset to 0 when an allowance
//   is already set: Tether refuses non-zero to non-zero);
// - TRON (TronLink: window.tronLink / window.tronWeb): the service prepares each approve transaction; TronLink signs
//   (tronWeb.trx.sign) and sends it (tronWeb.trx.sendRawTransaction); a reset to 0 is confirmed before the approve;
// - Solana (Wallet Standard): the page discovers wallets through the wallet-standard events, connects, and has the
//   wallet sign and send the prepared ApproveChecked transaction (solana:signAndSendTransaction).
// Then it waits for the service to see the authorization (a new payment method, or the subscription leaving
// incomplete).
export const AUTHORIZE_JS = String.raw`(function () {
  var app = document.getElementById('app');
  var msg = document.getElementById('msg');
  var button = document.getElementById('authorize');
  var id = app.getAttribute('data-id');
  var initialMethod = app.getAttribute('data-payment-method') || '';
  function say(t) { msg.textContent = t; }
  function sleep(ms) { return new Promise(function (ok) { setTimeout(ok, ms); }); }
  function pad(hex) { return hex.replace(/^0x/, '').toLowerCase().padStart(64, '0'); }
  function approveData(spender, amount) { return '0x095ea7b3' + pad(spender) + pad(BigInt(amount).toString(16)); }

  // Wallet Standard, app side: collect wallets registered before and after this script ran.
  var standardWallets = [];
  function registerWallet(w) { if (standardWallets.indexOf(w) < 0) standardWallets.push(w); return function () {}; }
  var appApi = { register: function () { for (var i = 0; i < arguments.length; i++) registerWallet(arguments[i]); return function () {}; } };
  window.addEventListener('wallet-standard:register-wallet', function (e) { try { e.detail(appApi); } catch (err) { /* a broken wallet */ } });
  try { window.dispatchEvent(new CustomEvent('wallet-standard:app-ready', { detail: appApi })); } catch (err) { /* old browser */ }

  async function select(network, token, address) {
    var sel = await fetch('/subscribe/' + id + '/select', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ network: network, token: token, address: address }) });
    var info = await sel.json();
    if (!sel.ok) throw new Error((info.error && info.error.message) || 'selection refused');
    return info;
  }

  async function waitReceipt(eth, hash) {
    for (;;) {
      var r = await eth.request({ method: 'eth_getTransactionReceipt', params: [hash] });
      if (r) { if (r.status !== '0x1') throw new Error('the approval transaction failed'); return r; }
      await sleep(500);
    }
  }

  async function authorizeEvm(network, token) {
    var eth = window.ethereum;
    if (!eth) throw new Error('no browser wallet found. Install one that supports Ethereum, or open this page in your wallet');
    var accounts = await eth.request({ method: 'eth_requestAccounts' });
    var from = accounts[0];
    var info = await select(network, token, from);
    if (info.authorized) return;
    if (info.chain_id) {
      var current = await eth.request({ method: 'eth_chainId' });
      if (current !== info.chain_id) await eth.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: info.chain_id }] });
    }
    if (info.reset_first) {
      say('Step 1 of 2: resetting the existing allowance to 0…');
      await waitReceipt(eth, await eth.request({ method: 'eth_sendTransaction', params: [{ from: from, to: info.token_contract, data: approveData(info.spender, 0) }] }));
    }
    if (BigInt(info.current_allowance_base) < BigInt(info.allowance_base)) {
      say('Approve ' + info.allowance + ' ' + info.token + ' in your wallet…');
      await waitReceipt(eth, await eth.request({ method: 'eth_sendTransaction', params: [{ from: from, to: info.token_contract, data: approveData(info.spender, info.allowance_base) }] }));
    }
  }

  async function tronSend(tw, tx) {
    var signed = await tw.trx.sign(tx);
    var r = await tw.trx.sendRawTransaction(signed);
    if (!r || r.result !== true) throw new Error('the wallet could not send the transaction' + (r && r.code ? ' (' + r.code + ')' : ''));
    return r.txid || (r.transaction && r.transaction.txID) || tx.txID;
  }

  async function authorizeTron(network, token) {
    var link = window.tronLink;
    if (link && link.request) {
      var res = await link.request({ method: 'tron_requestAccounts' });
      if (res && res.code && res.code !== 200) throw new Error('TronLink refused the connection');
    }
    var tw = (link && link.tronWeb) || window.tronWeb;
    if (!tw || !tw.defaultAddress || !tw.defaultAddress.base58) throw new Error('no TRON wallet found. Install TronLink, or open this page in your wallet');
    var from = tw.defaultAddress.base58;
    var info = await select(network, token, from);
    if (info.authorized || !info.wallet_transactions) return; // authorized, or an allowance that covers it awaits finality
    if (info.reset_first) {
      say('Step 1 of 2: resetting the existing allowance to 0…');
      var txid = await tronSend(tw, info.wallet_transactions[0].transaction);
      for (;;) {
        var ti = await tw.trx.getTransactionInfo(txid);
        if (ti && ti.blockNumber) { if (ti.receipt && ti.receipt.result && ti.receipt.result !== 'SUCCESS') throw new Error('the reset transaction failed'); break; }
        await sleep(1000);
      }
      info = await select(network, token, from); // a fresh approve, built after the reset landed
      if (info.authorized || !info.wallet_transactions) return;
    }
    say('Approve ' + info.allowance + ' ' + info.token + ' in TronLink…');
    await tronSend(tw, info.wallet_transactions[0].transaction);
  }

  function base64Bytes(s) { var b = atob(s); var out = new Uint8Array(b.length); for (var i = 0; i < b.length; i++) out[i] = b.charCodeAt(i); return out; }

  async function authorizeSolana(network, token) {
    var wallet = standardWallets.find(function (w) { return w.features && w.features['standard:connect'] && w.features['solana:signAndSendTransaction']; });
    if (!wallet) throw new Error('no Solana wallet found. Install one that supports the Wallet Standard, or open this page in your wallet');
    var connected = await wallet.features['standard:connect'].connect();
    var account = (connected && connected.accounts && connected.accounts[0]) || wallet.accounts[0];
    if (!account) throw new Error('the wallet shared no account');
    var info = await select(network, token, account.address);
    if (info.authorized || !info.wallet_transactions) return;
    say('Approve ' + info.allowance + ' ' + info.token + ' in your wallet. It replaces any other delegate of this token account.');
    await wallet.features['solana:signAndSendTransaction'].signAndSendTransaction({ account: account, chain: info.wallet_chain, transaction: base64Bytes(info.wallet_transactions[0].transaction) });
  }

  async function waitAuthorized() {
    for (;;) {
      var r = await fetch('/subscribe/' + id + '/status', { cache: 'no-store' });
      var s = await r.json();
      if (s.status !== 'incomplete' && (s.payment_method_id || '') !== initialMethod) {
        say('Authorized: your subscription is ' + s.status + '.');
        app.setAttribute('data-status', s.status);
        app.setAttribute('data-authorized', 'true');
        return;
      }
      await sleep(1000);
    }
  }

  button.addEventListener('click', async function () {
    button.disabled = true;
    try {
      var choice = document.getElementById('choice');
      var parts = choice.value.split(':');
      var family = choice.options[choice.selectedIndex].getAttribute('data-family');
      if (family === 'tron') await authorizeTron(parts[0], parts[1]);
      else if (family === 'solana') await authorizeSolana(parts[0], parts[1]);
      else await authorizeEvm(parts[0], parts[1]);
      say('Approved. Waiting for the network to confirm…');
      await waitAuthorized();
    } catch (e) {
      say('Authorization did not complete: ' + (e && e.message ? e.message : e));
      button.disabled = false;
    }
  });
})();
`;
