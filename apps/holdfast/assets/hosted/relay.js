// Holdfast's wallet relay: a frame on Holdfast's origin with no field, which takes a wallet's
// token (already encrypted for Holdfast: the page cannot read it) from the page and tokenizes
// it with POST /v1/tokens, so the page never calls Holdfast itself (no CORS, no connect-src).
// Message format: docs/hosted-fields.md ("Message protocol", version 1).
(function () {
  'use strict';

  var PROTOCOL = 1;
  var WALLETS = ['google_pay', 'apple_pay'];
  var params = new URLSearchParams(location.search);
  var parentOrigin = params.get('origin');
  var channelName = params.get('channel');
  var publicApiKey = params.get('publicApiKey');

  function toParent(message) {
    message.holdfast = PROTOCOL;
    message.channel = channelName;
    message.field = 'relay';
    window.parent.postMessage(message, parentOrigin);
  }

  function fail(request, code, message, field) {
    toParent({ type: 'tokenized', request: request, error: { code: code, message: message, field: field || null } });
  }

  function tokenize(request, wallet, token, clientSecret) {
    var body = { wallet: { type: wallet, token: token } };
    if (clientSecret) body.clientSecret = clientSecret;
    fetch('/v1/tokens', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': publicApiKey },
      body: JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store'
    }).then(function (response) {
      return response.json().then(function (json) {
        if (response.ok) {
          toParent({ type: 'tokenized', request: request, token: json.id, brand: json.card && json.card.brand });
        } else {
          var error = json.error || {};
          fail(request, error.code || 'tokenization_failed', error.message || 'The wallet token could not be used.', error.param);
        }
      });
    }).catch(function () {
      fail(request, 'network_error', 'Holdfast could not be reached. Try again.', null);
    });
  }

  window.addEventListener('message', function (event) {
    if (event.source !== window.parent || event.origin !== parentOrigin) return;
    var data = event.data;
    if (!data || data.holdfast !== PROTOCOL || data.channel !== channelName) return;
    if (data.type === 'tokenize-wallet' && typeof data.request === 'string' &&
        WALLETS.indexOf(data.wallet) !== -1 && typeof data.token === 'string' && data.token.length <= 65536) {
      tokenize(data.request, data.wallet, data.token, typeof data.clientSecret === 'string' ? data.clientSecret : null);
    }
  });

  toParent({ type: 'ready' });
})();
