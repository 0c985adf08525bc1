// Hosted payment page script: countdown, copy buttons, live status (server-sent events, polling as fallback),
// redirect after payment. Plain ES2017, no dependencies; every text comes from the server's catalog in #sp-data.
(() => {
  var dataEl = document.getElementById('sp-data');
  if (!dataEl) return;
  var data = JSON.parse(dataEl.textContent || '{}');
  var msgs = data.msgs || {};
  var clockOffset = data.serverNow * 1000 - Date.now();
  var state = data.state;
  var terminal = { paid: 1, canceled: 1 };
  var source = null;
  var pollTimer = null;
  var errors = 0;

  function $(id) {
    return document.getElementById(id);
  }
  function fmt(key, vars) {
    return String(msgs[key] || '').replace(/\{(\w+)\}/g, (m, k) => (vars && k in vars ? vars[k] : m));
  }
  function pad(n) {
    return n < 10 ? '0' + n : String(n);
  }

  // Countdown to expires_at on the server's clock.
  var countdown = $('sp-countdown');
  function tick() {
    if (!countdown) return;
    var left = Math.max(0, Math.floor((data.expiresAt * 1000 - (Date.now() + clockOffset)) / 1000));
    var h = Math.floor(left / 3600);
    var m = Math.floor((left % 3600) / 60);
    var text = fmt('time.minutes_seconds', { m: h > 0 ? h + ':' + pad(m) : String(m), s: pad(left % 60) });
    if (countdown.textContent !== text) countdown.textContent = text;
    if (left === 0 && (state === 'waiting' || state === 'select' || state === 'partial')) refresh();
  }

  // Copy buttons: clipboard API, with a selection fallback for older browsers and insecure origins.
  function copy(button) {
    var text = button.getAttribute('data-copy') || '';
    var done = () => {
      var label = button.textContent;
      button.textContent = msgs['pay.copied'];
      setTimeout(() => {
        button.textContent = label;
      }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, () => {
        fallbackCopy(text);
        done();
      });
    } else {
      fallbackCopy(text);
      done();
    }
  }
  function fallbackCopy(text) {
    var area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.style.position = 'fixed';
    area.style.opacity = '0';
    document.body.appendChild(area);
    area.select();
    try {
      document.execCommand('copy');
    } catch (e) {
      /* nothing else to try */
    }
    document.body.removeChild(area);
  }
  var buttons = document.querySelectorAll('button[data-copy]');
  for (var i = 0; i < buttons.length; i++) {
    buttons[i].addEventListener('click', (ev) => {
      copy(ev.currentTarget);
    });
  }

  function statusText(s) {
    switch (s.state) {
      case 'select':
        return fmt('status.select');
      case 'waiting':
        return fmt('status.waiting');
      case 'confirming':
        return fmt('status.confirming');
      case 'partial':
        return fmt('status.partial', { remaining: s.remaining, token: s.token });
      case 'paid':
        return fmt('status.paid');
      case 'expired':
        return s.received && s.received !== '0.00'
          ? fmt('status.expired_received', { received: s.received, token: s.token })
          : fmt('status.expired');
      case 'canceled':
        return fmt('status.canceled');
      default:
        return '';
    }
  }

  function apply(s) {
    errors = 0;
    var offline = $('sp-offline');
    if (offline) offline.hidden = true;
    // The amount to send (and its QR code) is rendered by the server: reload when it changed.
    var payable = s.state === 'waiting' || s.state === 'partial' || s.state === 'confirming';
    if (
      payable &&
      data.remainingBase !== null &&
      s.remaining_base !== null &&
      s.remaining_base !== '0' &&
      s.remaining_base !== data.remainingBase
    ) {
      stop();
      location.reload();
      return;
    }
    // Paid while the payer watches, with no merchant page to return to: reload, so that the server renders what
    // arrived with its explorer links.
    if (s.state === 'paid' && state !== 'paid' && !s.redirect && !$('sp-arrived')) {
      stop();
      location.reload();
      return;
    }
    state = s.state;
    var box = $('sp-status');
    if (box) box.setAttribute('data-state', s.state);
    var text = $('sp-status-text');
    var t = statusText(s);
    if (text && text.textContent !== t) text.textContent = t;
    var conf = $('sp-confirmations');
    if (conf) {
      var show = s.state === 'confirming' && s.confirmations && s.confirmations.total;
      conf.hidden = !show;
      if (show) conf.textContent = fmt('status.confirmations', { n: s.confirmations.n, total: s.confirmations.total });
    }
    var pay = $('sp-pay');
    if (pay && !payable && s.state !== 'select') pay.hidden = true;
    var picker = $('sp-picker');
    if (picker && s.state !== 'select') picker.hidden = s.state === 'expired' || s.state === 'paid' || s.state === 'canceled';
    var back = $('sp-back');
    if (back && s.state === 'paid') back.hidden = true;
    if (s.state === 'paid') {
      hideTimer();
      if (s.redirect) {
        var ret = $('sp-return');
        if (ret) {
          ret.hidden = false;
          ret.setAttribute('href', s.redirect);
        }
        var red = $('sp-redirecting');
        if (red) red.hidden = false;
        setTimeout(() => {
          location.assign(s.redirect);
        }, 1500);
      }
    }
    if (s.state === 'expired' || s.state === 'canceled') hideTimer();
    if (terminal[s.state]) stop();
  }

  function hideTimer() {
    var timer = $('sp-timer');
    if (timer) timer.hidden = true;
  }

  function refresh() {
    var req = new XMLHttpRequest();
    req.open('GET', data.statusUrl);
    req.setRequestHeader('Accept', 'application/json');
    req.onload = () => {
      if (req.status === 200) {
        try {
          apply(JSON.parse(req.responseText));
        } catch (e) {
          /* ignore a malformed answer */
        }
      } else onError();
    };
    req.onerror = onError;
    req.send();
  }

  function onError() {
    errors++;
    var offline = $('sp-offline');
    if (offline && errors >= 2) offline.hidden = false;
  }

  function startPolling() {
    if (pollTimer) return;
    refresh();
    pollTimer = setInterval(refresh, 3000);
  }

  function stop() {
    if (source) {
      source.close();
      source = null;
    }
    if (pollTimer) {
      clearInterval(pollTimer);
      pollTimer = null;
    }
  }

  function connect() {
    if (terminal[state]) return;
    if (!window.EventSource) {
      startPolling();
      return;
    }
    source = new EventSource(data.eventsUrl);
    source.onmessage = (ev) => {
      try {
        apply(JSON.parse(ev.data));
      } catch (e) {
        /* ignore */
      }
    };
    source.onerror = () => {
      // A stream the server refused (429 over a cap, 404) is CLOSED and never retried by the browser: poll at once.
      if (source && source.readyState === 2) {
        source.close();
        source = null;
        startPolling();
        return;
      }
      // EventSource reconnects by itself after a network drop; after repeated failures fall back to polling.
      onError();
      if (errors >= 2 && source) {
        source.close();
        source = null;
        startPolling();
      }
    };
  }

  tick();
  setInterval(tick, 1000);
  connect();
  // A page restored from the back/forward cache has a stale state: ask again.
  window.addEventListener('pageshow', (ev) => {
    if (ev.persisted) refresh();
  });
})();
