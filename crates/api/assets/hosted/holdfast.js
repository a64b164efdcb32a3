// Holdfast's client script (spec 4.4). Loaded by a script tag with a public key:
//   <script src="https://HOLDFAST/v1/clients/holdfast.js?publicApiKey=pub_..."></script>
// It puts each payment field in a frame served by Holdfast, so card data never enters this
// page: the page receives each field's state and, from tokenize(), a single-use token.
// Everything is in docs/hosted-fields.md; the message format is version 1 there.
(function () {
  'use strict';

  var PROTOCOL = 1;
  var FIELDS = ['number', 'expiry', 'cvv'];
  var TITLES = {
    number: 'Secure card number input',
    expiry: 'Secure expiration date input',
    cvv: 'Secure security code input',
    name: 'Secure name on card input'
  };
  var READY_TIMEOUT_MS = 10000;
  var TOKENIZE_TIMEOUT_MS = 30000;

  var script = document.currentScript;
  if (!script || !script.src) {
    throw new Error('Holdfast: load holdfast.js with a <script src> tag, not as a module or inline.');
  }
  var source = new URL(script.src);
  var holdfastOrigin = source.origin;
  var publicApiKey = source.searchParams.get('publicApiKey');

  function HoldfastError(code, message, field) {
    var error = new Error(message);
    error.name = 'HoldfastError';
    error.code = code;
    error.field = field || null;
    return error;
  }

  function randomToken() {
    var bytes = new Uint8Array(18);
    crypto.getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) {
      return ('0' + b.toString(16)).slice(-2);
    }).join('');
  }

  function element(target, name) {
    var found = typeof target === 'string' ? document.querySelector(target) : target;
    if (!(found instanceof Element)) {
      throw HoldfastError('invalid_options', 'Holdfast: no element for the ' + name + ' field.', name);
    }
    return found;
  }

  function copyPlain(value) {
    // Only data crosses into the frames: no functions, no elements.
    return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
  }

  function fields(options) {
    options = options || {};
    var containers = options.fields || {};
    var channel = randomToken();
    var frames = {};
    var states = {};
    var ready = {};
    var listeners = { change: [], focus: [], blur: [], ready: [] };
    var requests = {};
    var destroyed = false;
    var clientSecret = typeof options.clientSecret === 'string' ? options.clientSecret : null;
    // The name on the card is the one optional field: mounted only when given a container.
    var mounted = containers.name ? FIELDS.concat(['name']) : FIELDS.slice();

    function emit(type, event) {
      (listeners[type] || []).forEach(function (listener) {
        try {
          listener(event);
        } catch (e) {
          setTimeout(function () { throw e; });
        }
      });
    }

    function send(name, message) {
      var frame = frames[name];
      if (!frame || !frame.contentWindow) return;
      message.holdfast = PROTOCOL;
      message.channel = channel;
      frame.contentWindow.postMessage(message, holdfastOrigin);
    }

    function configuration(name) {
      var labels = options.labels || {};
      var placeholders = options.placeholders || {};
      return copyPlain({
        style: options.style,
        label: labels[name],
        hideLabel: options.hideLabels === true,
        placeholder: placeholders[name]
      });
    }

    mounted.forEach(function (name) {
      var container = element(containers[name], name);
      var frame = document.createElement('iframe');
      var src = new URL('/v1/clients/fields/' + name, holdfastOrigin);
      src.searchParams.set('publicApiKey', publicApiKey || '');
      src.searchParams.set('origin', location.origin);
      src.searchParams.set('channel', channel);
      frame.src = src.toString();
      frame.name = 'holdfast-' + name + '-' + channel;
      frame.title = (options.titles && options.titles[name]) || TITLES[name];
      frame.setAttribute('scrolling', 'no');
      // CSSOM, not a style attribute: allowed under a Content-Security-Policy without
      // 'unsafe-inline'.
      frame.style.border = '0';
      frame.style.width = '100%';
      frame.style.height = '76px';
      frame.style.display = 'block';
      frame.style.overflow = 'hidden';
      frames[name] = frame;
      states[name] = { empty: true, complete: false, valid: false };
      container.appendChild(frame);
    });

    // Settles once, when every frame has loaded; each tokenize() waits for it with a timeout of
    // its own, so frames that load late (a slow network, a background tab) still pay.
    var allReady = new Promise(function (resolve) {
      listeners.ready.push(function () {
        if (mounted.every(function (name) { return ready[name]; })) resolve();
      });
    });
    var framesUnavailable = function () {
      return HoldfastError('frames_unavailable', 'Holdfast: the payment fields did not load. Check the public key and the page\'s Content-Security-Policy (frame-src).');
    };

    function sourceField(source) {
      for (var i = 0; i < mounted.length; i++) {
        if (frames[mounted[i]] && frames[mounted[i]].contentWindow === source) return mounted[i];
      }
      return null;
    }

    function onMessage(event) {
      // Only Holdfast's frames of this form, in this protocol.
      if (event.origin !== holdfastOrigin) return;
      var name = sourceField(event.source);
      var data = event.data;
      if (!name || !data || data.holdfast !== PROTOCOL || data.channel !== channel || data.field !== name) return;
      if (data.type === 'ready') {
        ready[name] = true;
        send(name, { type: 'configure', options: configuration(name) });
        emit('ready', { field: name });
      } else if (data.type === 'change') {
        var state = { empty: data.empty === true, complete: data.complete === true, valid: data.valid === true };
        if (name === 'number' && typeof data.brand === 'string') state.brand = data.brand;
        states[name] = state;
        emit('change', { field: name, state: copyPlain(state), form: snapshot() });
      } else if (data.type === 'focus' || data.type === 'blur') {
        emit(data.type, { field: name });
      } else if (data.type === 'resize' && typeof data.height === 'number' && data.height > 0 && data.height < 1000) {
        frames[name].style.height = Math.ceil(data.height) + 'px';
      } else if (data.type === 'tokenized' && name === 'number' && requests[data.request]) {
        var request = requests[data.request];
        delete requests[data.request];
        clearTimeout(request.timer);
        if (typeof data.token === 'string' && /^tkn_[A-Za-z0-9]+$/.test(data.token)) {
          request.resolve({ token: data.token, brand: typeof data.brand === 'string' ? data.brand : 'unknown' });
        } else {
          var error = data.error || {};
          request.reject(HoldfastError(String(error.code || 'tokenization_failed'), String(error.message || 'The card could not be tokenized.'), error.field ? String(error.field) : null));
        }
      }
    }
    window.addEventListener('message', onMessage);

    function snapshot() {
      var form = {};
      mounted.forEach(function (name) { form[name] = copyPlain(states[name]); });
      form.complete = mounted.every(function (name) { return states[name].valid; });
      return form;
    }

    return Object.freeze({
      /** Calls `listener` on 'change', 'focus', 'blur' or 'ready'. */
      on: subscriber(listeners),
      /** Every field's state: {number: {empty, complete, valid, brand}, expiry, cvv, complete}. */
      state: snapshot,
      /** Resolves with {token, brand}, or rejects with an Error that has a code and a field. */
      tokenize: function () {
        if (destroyed) return Promise.reject(HoldfastError('destroyed', 'Holdfast: these fields were removed.'));
        return within(allReady, READY_TIMEOUT_MS, framesUnavailable).then(function () {
          return new Promise(function (resolve, reject) {
            var id = randomToken();
            var timer = setTimeout(function () {
              delete requests[id];
              reject(HoldfastError('timeout', 'Holdfast did not answer in time. Try again.'));
            }, TOKENIZE_TIMEOUT_MS);
            requests[id] = { resolve: resolve, reject: reject, timer: timer };
            var message = { type: 'tokenize', request: id };
            if (clientSecret) message.clientSecret = clientSecret;
            if (frames.name) message.name = true;
            send('number', message);
          });
        });
      },
      focus: function (name) { send(name, { type: 'focus' }); },
      clear: function () { mounted.forEach(function (name) { send(name, { type: 'clear' }); }); },
      destroy: function () {
        destroyed = true;
        window.removeEventListener('message', onMessage);
        mounted.forEach(function (name) {
          if (frames[name] && frames[name].parentNode) frames[name].parentNode.removeChild(frames[name]);
        });
      }
    });
  }

  var MODE = /^pub_test_/.test(publicApiKey || '') ? 'test' : 'live';
  var RELAY_TIMEOUT_MS = 30000;
  // ISO 4217 currencies whose minor unit is not the hundredth: amounts are in minor units.
  var EXPONENTS = {
    BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0,
    VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0, BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3
  };

  /** `amount` minor units of `currency` as the decimal string the wallets' sheets show. */
  function decimalAmount(amount, currency) {
    var exponent = Object.prototype.hasOwnProperty.call(EXPONENTS, currency) ? EXPONENTS[currency] : 2;
    return (Number(amount || 0) / Math.pow(10, exponent)).toFixed(exponent);
  }

  /**
   * `promise`, or a rejection with `failure()` if it has not settled within `ms`: a timeout per
   * wait, so a promise that settles late still serves the calls made after it.
   */
  function within(promise, ms, failure) {
    return new Promise(function (resolve, reject) {
      var timer = setTimeout(function () { reject(failure()); }, ms);
      promise.then(function (value) {
        clearTimeout(timer);
        resolve(value);
      });
    });
  }

  /** A controller's `on(type, listener)` over its table of listeners. */
  function subscriber(listeners) {
    return function (type, listener) {
      if (!listeners[type] || typeof listener !== 'function') {
        throw HoldfastError('invalid_options', 'Holdfast: unknown event ' + String(type) + '.');
      }
      listeners[type].push(listener);
      return this;
    };
  }

  /**
   * A hidden frame on Holdfast's origin that tokenizes a wallet's token for this page: the
   * token is encrypted for Holdfast, and the page never calls Holdfast itself.
   */
  function relay() {
    var channel = randomToken();
    var frame = document.createElement('iframe');
    var src = new URL('/v1/clients/fields/relay', holdfastOrigin);
    src.searchParams.set('publicApiKey', publicApiKey || '');
    src.searchParams.set('origin', location.origin);
    src.searchParams.set('channel', channel);
    frame.src = src.toString();
    frame.title = 'Holdfast wallet relay';
    frame.setAttribute('aria-hidden', 'true');
    frame.tabIndex = -1;
    frame.style.display = 'none';
    var requests = {};
    var markReady;
    var ready = new Promise(function (resolve) { markReady = resolve; });
    window.addEventListener('message', function (event) {
      var data = event.data;
      if (event.origin !== holdfastOrigin || event.source !== frame.contentWindow) return;
      if (!data || data.holdfast !== PROTOCOL || data.channel !== channel || data.field !== 'relay') return;
      if (data.type === 'ready') markReady();
      var request = requests[data.request];
      if (!request || request.type !== data.type) return;
      delete requests[data.request];
      if (data.error) {
        var error = data.error;
        request.reject(HoldfastError(String(error.code || 'request_failed'), String(error.message || 'Holdfast refused the request.'), error.field ? String(error.field) : null));
      } else if (data.type === 'tokenized' && typeof data.token === 'string' && /^tkn_[A-Za-z0-9]+$/.test(data.token)) {
        request.resolve({ token: data.token, brand: typeof data.brand === 'string' ? data.brand : 'unknown' });
      } else if (data.type === 'merchant-session' && data.session && typeof data.session === 'object') {
        request.resolve(copyPlain(data.session));
      } else {
        request.reject(HoldfastError('request_failed', 'Holdfast gave no usable answer.'));
      }
    });
    document.body.appendChild(frame);
    var relayUnavailable = function () {
      return HoldfastError('frames_unavailable', 'Holdfast: the wallet relay did not load. Check the public key and the page\'s Content-Security-Policy (frame-src).');
    };
    function ask(type, fields) {
      return within(ready, READY_TIMEOUT_MS, relayUnavailable).then(function () {
        return new Promise(function (resolve, reject) {
          var id = randomToken();
          var timer = setTimeout(function () {
            delete requests[id];
            reject(HoldfastError('timeout', 'Holdfast did not answer in time. Try again.'));
          }, RELAY_TIMEOUT_MS);
          var settle = function (done) {
            return function (value) {
              clearTimeout(timer);
              done(value);
            };
          };
          requests[id] = { type: type === 'tokenize-wallet' ? 'tokenized' : type, resolve: settle(resolve), reject: settle(reject) };
          var message = { holdfast: PROTOCOL, channel: channel, type: type, request: id };
          for (var key in fields) message[key] = fields[key];
          frame.contentWindow.postMessage(message, holdfastOrigin);
        });
      });
    }
    return {
      tokenize: function (wallet, token, clientSecret) {
        var fields = { wallet: wallet, token: token };
        if (clientSecret) fields.clientSecret = clientSecret;
        return ask('tokenize-wallet', fields);
      },
      merchantSession: function (validationUrl) {
        return ask('merchant-session', { validationUrl: validationUrl });
      }
    };
  }

  /**
   * The Google Pay button, where Google Pay (its pay.js, loaded by the page) says the browser can
   * pay. `options`: container, merchantId (the gatewayMerchantId: the Holdfast merchant paid),
   * amount (minor units), currency, merchantName, clientSecret, buttonType. Events: 'token'
   * ({token, brand}), 'error' (an Error with code), 'cancel'.
   */
  function googlePay(options) {
    options = options || {};
    var container = element(options.container, 'googlePay');
    var listeners = { token: [], error: [], cancel: [] };
    function emit(type, value) {
      listeners[type].forEach(function (listener) { listener(value); });
    }
    var api = window.google && window.google.payments && window.google.payments.api;
    var cardMethod = {
      type: 'CARD',
      parameters: {
        allowedAuthMethods: ['PAN_ONLY', 'CRYPTOGRAM_3DS'],
        allowedCardNetworks: ['VISA', 'MASTERCARD', 'AMEX', 'DISCOVER', 'JCB']
      }
    };
    var available = Promise.resolve(false);
    if (api && typeof api.PaymentsClient === 'function') {
      var client = new api.PaymentsClient({ environment: MODE === 'test' ? 'TEST' : 'PRODUCTION' });
      var holdfast = relay();
      var request = {
        apiVersion: 2,
        apiVersionMinor: 0,
        allowedPaymentMethods: [{
          type: cardMethod.type,
          parameters: cardMethod.parameters,
          tokenizationSpecification: {
            type: 'PAYMENT_GATEWAY',
            parameters: { gateway: 'holdfast', gatewayMerchantId: String(options.merchantId || '') }
          }
        }],
        transactionInfo: {
          totalPriceStatus: 'FINAL',
          totalPrice: decimalAmount(options.amount, String(options.currency || 'USD')),
          currencyCode: String(options.currency || 'USD')
        },
        merchantInfo: { merchantName: String(options.merchantName || '') }
      };
      var onClick = function () {
        client.loadPaymentData(request).then(function (paymentData) {
          var token = paymentData && paymentData.paymentMethodData &&
            paymentData.paymentMethodData.tokenizationData &&
            paymentData.paymentMethodData.tokenizationData.token;
          if (typeof token !== 'string') throw HoldfastError('wallet_failed', 'Google Pay returned no token.');
          return holdfast.tokenize('google_pay', token, options.clientSecret);
        }).then(function (result) {
          emit('token', result);
        }, function (error) {
          if (error && error.statusCode === 'CANCELED') emit('cancel', {});
          else emit('error', error && error.name === 'HoldfastError' ? error : HoldfastError('wallet_failed', 'Google Pay did not complete.'));
        });
      };
      available = client.isReadyToPay({ apiVersion: 2, apiVersionMinor: 0, allowedPaymentMethods: [cardMethod] })
        .then(function (answer) {
          if (!answer || !answer.result) return false;
          container.appendChild(client.createButton({
            onClick: onClick,
            buttonType: options.buttonType || 'pay',
            allowedPaymentMethods: [cardMethod]
          }));
          return true;
        }, function () { return false; });
    }
    return Object.freeze({
      /** Resolves true once the button is shown, false where Google Pay cannot pay. */
      available: available,
      on: subscriber(listeners)
    });
  }

  /**
   * The Apple Pay button, where `ApplePaySession.canMakePayments()` says the device can pay.
   * `options`: container, amount (minor units), currency, countryCode, label (the merchant's
   * name on the sheet), clientSecret. Merchant validation goes through Holdfast; the payment's
   * token becomes a `tkn_`. Events: 'token' ({token, brand}), 'error', 'cancel'.
   */
  function applePay(options) {
    options = options || {};
    var container = element(options.container, 'applePay');
    var listeners = { token: [], error: [], cancel: [] };
    function emit(type, value) {
      listeners[type].forEach(function (listener) { listener(value); });
    }
    var Session = window.ApplePaySession;
    var shown = false;
    if (typeof Session === 'function' && typeof Session.canMakePayments === 'function' && Session.canMakePayments()) {
      var holdfast = relay();
      var button = document.createElement('button');
      button.type = 'button';
      button.className = 'holdfast-apple-pay';
      button.lang = 'en';
      button.textContent = 'Pay with Apple Pay';
      button.addEventListener('click', function () {
        var session = new Session(3, {
          countryCode: String(options.countryCode || 'US'),
          currencyCode: String(options.currency || 'USD'),
          merchantCapabilities: ['supports3DS'],
          supportedNetworks: ['visa', 'masterCard', 'amex', 'discover', 'jcb'],
          total: { label: String(options.label || ''), amount: decimalAmount(options.amount, String(options.currency || 'USD')) }
        });
        session.onvalidatemerchant = function (event) {
          holdfast.merchantSession(event.validationURL).then(function (merchantSession) {
            session.completeMerchantValidation(merchantSession);
          }, function (error) {
            session.abort();
            emit('error', error);
          });
        };
        session.onpaymentauthorized = function (event) {
          var paymentData = event.payment && event.payment.token && event.payment.token.paymentData;
          holdfast.tokenize('apple_pay', JSON.stringify(paymentData), options.clientSecret).then(function (result) {
            session.completePayment(Session.STATUS_SUCCESS);
            emit('token', result);
          }, function (error) {
            session.completePayment(Session.STATUS_FAILURE);
            emit('error', error);
          });
        };
        session.oncancel = function () { emit('cancel', {}); };
        session.begin();
      });
      container.appendChild(button);
      shown = true;
    }
    return Object.freeze({
      /** Whether the button is shown. */
      available: shown,
      on: subscriber(listeners)
    });
  }

  window.Holdfast = Object.freeze({ protocol: PROTOCOL, mode: MODE, fields: fields, googlePay: googlePay, applePay: applePay });
})();
