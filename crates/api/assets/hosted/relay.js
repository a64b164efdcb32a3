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

  function post(path, body) {
    return holdfastPost(path, body, publicApiKey);
  }

  function answer(type, request, work) {
    work.then(function (value) {
      var message = { type: type, request: request };
      for (var key in value) message[key] = value[key];
      toParent(message);
    }, function (error) {
      var code = error.code || 'network_error';
      var text = error.code ? error.message : 'Holdfast could not be reached. Try again.';
      toParent({ type: type, request: request, error: { code: code, message: text, field: error.field || null } });
    });
  }

  function tokenize(request, wallet, token, clientSecret) {
    var body = { wallet: { type: wallet, token: token } };
    if (clientSecret) body.clientSecret = clientSecret;
    answer('tokenized', request, post('/v1/tokens', body).then(function (json) {
      return { token: json.id, brand: json.card && json.card.brand };
    }));
  }

  // Apple Pay's merchant validation, for the page's own domain.
  function merchantSession(request, validationUrl) {
    answer('merchant-session', request, post('/v1/apple-pay/merchant-sessions', {
      validationUrl: validationUrl,
      domainName: new URL(parentOrigin).hostname
    }).then(function (session) {
      return { session: session };
    }));
  }

  window.addEventListener('message', function (event) {
    if (event.source !== window.parent || event.origin !== parentOrigin) return;
    var data = event.data;
    if (!data || data.holdfast !== PROTOCOL || data.channel !== channelName) return;
    if (data.type === 'tokenize-wallet' && typeof data.request === 'string' &&
        WALLETS.indexOf(data.wallet) !== -1 && typeof data.token === 'string' && data.token.length <= 65536) {
      tokenize(data.request, data.wallet, data.token, typeof data.clientSecret === 'string' ? data.clientSecret : null);
    } else if (data.type === 'merchant-session' && typeof data.request === 'string' &&
        typeof data.validationUrl === 'string' && data.validationUrl.length <= 512) {
      merchantSession(data.request, data.validationUrl);
    }
  });

  toParent({ type: 'ready' });
})();
