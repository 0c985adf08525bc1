// The page's script, served from /subscribe/assets/authorize.js. EIP-1193 only (window.ethereum): connect, switch
// chain when asked, approve (after a reset to 0 when an allowance is already set: Tether refuses non-zero to
// non-zero), then wait for the service to see the Approval.
export const AUTHORIZE_JS = String.raw`(function () {
  var app = document.getElementById('app');
  var msg = document.getElementById('msg');
  var button = document.getElementById('authorize');
  var id = app.getAttribute('data-id');
  function say(t) { msg.textContent = t; }
  function pad(hex) { return hex.replace(/^0x/, '').toLowerCase().padStart(64, '0'); }
  function approveData(spender, amount) { return '0x095ea7b3' + pad(spender) + pad(BigInt(amount).toString(16)); }
  async function waitReceipt(eth, hash) {
    for (;;) {
      var r = await eth.request({ method: 'eth_getTransactionReceipt', params: [hash] });
      if (r) { if (r.status !== '0x1') throw new Error('the approval transaction failed'); return r; }
      await new Promise(function (ok) { setTimeout(ok, 500); });
    }
  }
  async function poll() {
    for (;;) {
      var r = await fetch('/subscribe/' + id + '/status', { cache: 'no-store' });
      var s = await r.json();
      if (s.status !== 'incomplete') { say('Authorized: your subscription is ' + s.status + '.'); app.setAttribute('data-status', s.status); return; }
      await new Promise(function (ok) { setTimeout(ok, 1000); });
    }
  }
  button.addEventListener('click', async function () {
    var eth = window.ethereum;
    if (!eth) { say('No browser wallet found. Install one that supports Ethereum, or open this page in your wallet.'); return; }
    button.disabled = true;
    try {
      var parts = document.getElementById('choice').value.split(':');
      var accounts = await eth.request({ method: 'eth_requestAccounts' });
      var from = accounts[0];
      var sel = await fetch('/subscribe/' + id + '/select', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ network: parts[0], token: parts[1], address: from }) });
      var info = await sel.json();
      if (!sel.ok) throw new Error(info.error || 'selection refused');
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
      say('Approved. Waiting for the network to confirm…');
      await poll();
    } catch (e) {
      say('Authorization did not complete: ' + (e && e.message ? e.message : e));
      button.disabled = false;
    }
  });
})();
`;
