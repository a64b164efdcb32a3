// One Holdfast payment field, inside a frame on Holdfast's origin. The card data typed here
// stays in this frame and its sibling frames (same origin, one BroadcastChannel per form);
// only the number frame sends it, to POST /v1/tokens. The merchant page receives state and the
// token, through postMessage, addressed to the origin the page gave and to no other.
// Message format: docs/hosted-fields.md ("Message protocol", version 1).
(function () {
  'use strict';

  var PROTOCOL = 1;
  // The server's IIN table (crates/domain/src/payment/brand.rs), written in when served.
  var IIN_RANGES = "__IIN_RANGES__";
  var COLLECT_TIMEOUT_MS = 3000;
  // The API names a card field by its JSON path; the page knows the fields by their own names.
  var FIELD_OF_PARAM = {
    'payment.number': 'number',
    'payment.expiration': 'expiry',
    'payment.cvv': 'cvv',
    'payment.name': 'name'
  };
  var STYLE_STATES = ['base', 'focus', 'invalid'];
  var STYLE_PROPERTIES = {
    color: 'color',
    backgroundColor: 'background-color',
    borderColor: 'border-color',
    borderRadius: 'border-radius',
    fontFamily: 'font-family',
    fontSize: 'font-size',
    fontWeight: 'font-weight',
    letterSpacing: 'letter-spacing',
    padding: 'padding',
    placeholderColor: 'placeholder-color',
    labelColor: 'label-color',
    errorColor: 'error-color'
  };

  var params = new URLSearchParams(location.search);
  var field = document.body.getAttribute('data-field');
  var parentOrigin = params.get('origin');
  var channelName = params.get('channel');
  var publicApiKey = params.get('publicApiKey');
  var input = document.getElementById('input');
  var label = document.getElementById('label');
  var errorLine = document.getElementById('error');
  // Named by the parent's origin too: a page of another origin that learnt the channel and framed
  // a field of its own under it does not share this form's channel.
  var siblings = new BroadcastChannel('holdfast:' + parentOrigin + ':' + channelName);
  var brand = 'unknown';
  var touched = false;

  // --- Rules, the same as the server's -------------------------------------------------

  function digitsOf(text) {
    return text.replace(/\D/g, '');
  }

  function brandOf(digits) {
    for (var i = 0; i < IIN_RANGES.length; i++) {
      var range = IIN_RANGES[i];
      if (digits.length >= range.digits) {
        var prefix = Number(digits.slice(0, range.digits));
        if (prefix >= range.low && prefix <= range.high) return range;
      }
    }
    return null;
  }

  function cvvLength(brandName) {
    for (var i = 0; i < IIN_RANGES.length; i++) {
      if (IIN_RANGES[i].brand === brandName) return IIN_RANGES[i].cvvLength;
    }
    return 3;
  }

  function luhn(digits) {
    var sum = 0;
    for (var i = 0; i < digits.length; i++) {
      var d = Number(digits[digits.length - 1 - i]);
      if (i % 2 === 1) {
        d *= 2;
        if (d > 9) d -= 9;
      }
      sum += d;
    }
    return sum % 10 === 0;
  }

  // The length at which a number of this brand is usually complete; errors wait for it.
  function usualLength(brandName) {
    if (brandName === 'amex') return 15;
    if (brandName === 'diners') return 14;
    return 16;
  }

  // state: {empty, complete, valid, error (a message or null), value (for the token only)}
  var rules = {
    number: function (raw) {
      var digits = digitsOf(raw);
      var range = brandOf(digits);
      brand = range ? range.brand : 'unknown';
      if (!digits) return { empty: true, complete: false, valid: false, error: 'Enter your card number.' };
      var complete = digits.length >= usualLength(brand);
      if (digits.length < 12) {
        return { empty: false, complete: false, valid: false, error: 'Your card number is incomplete.' };
      }
      if (!luhn(digits)) {
        return { empty: false, complete: complete, valid: false, error: 'Your card number is invalid.', eager: complete };
      }
      return { empty: false, complete: complete, valid: true, error: null, value: digits };
    },
    expiry: function (raw) {
      var digits = digitsOf(raw);
      if (!digits) return { empty: true, complete: false, valid: false, error: 'Enter the expiration date.' };
      if (digits.length < 4) {
        return { empty: false, complete: false, valid: false, error: 'The expiration date is incomplete.' };
      }
      var month = Number(digits.slice(0, 2));
      var year = 2000 + Number(digits.slice(2, 4));
      if (month < 1 || month > 12) {
        return { empty: false, complete: true, valid: false, error: 'The expiration month must be 01 to 12.', eager: true };
      }
      var now = new Date();
      // A card is valid through the last day of its month.
      if (year < now.getUTCFullYear() || (year === now.getUTCFullYear() && month < now.getUTCMonth() + 1)) {
        return { empty: false, complete: true, valid: false, error: 'The expiration date is in the past.', eager: true };
      }
      return { empty: false, complete: true, valid: true, error: null, value: digits.slice(0, 4) };
    },
    name: function (raw) {
      // The server's rule for every free-text name (crates/domain/src/text.rs): NFC, trimmed,
      // no control or invisible format character (the joiner and tag characters emoji use
      // aside), 1 to 100 characters as a reader counts them.
      var text = raw.normalize('NFC').trim();
      if (!text) return { empty: true, complete: false, valid: false, error: 'Enter the name on the card.' };
      if (/\p{Cc}/u.test(text) || /[^\P{Cf}\u200d\u{e0020}-\u{e007f}]/u.test(text)) {
        return { empty: false, complete: true, valid: false, error: 'The name has characters that cannot be printed.', eager: true };
      }
      var characters = typeof Intl.Segmenter === 'function'
        ? Array.from(new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(text)).length
        : Array.from(text).length;
      if (characters > 100) {
        return { empty: false, complete: true, valid: false, error: 'The name is longer than 100 characters.', eager: true };
      }
      return { empty: false, complete: true, valid: true, error: null, value: text };
    },
    cvv: function (raw) {
      var digits = digitsOf(raw);
      var wanted = cvvLength(brand);
      if (!digits) return { empty: true, complete: false, valid: false, error: 'Enter the security code.' };
      if (digits.length < wanted) {
        return { empty: false, complete: false, valid: false, error: 'The security code is incomplete.' };
      }
      if (digits.length > wanted) {
        return { empty: false, complete: true, valid: false, error: 'The security code has ' + wanted + ' digits on this card.', eager: true };
      }
      return { empty: false, complete: true, valid: true, error: null, value: digits };
    }
  };

  // --- Formatting as typed --------------------------------------------------------------

  function format(raw) {
    if (field === 'name') return raw;
    var digits = digitsOf(raw);
    if (field === 'number') {
      digits = digits.slice(0, 19);
      var groups = brand === 'amex' ? [4, 6, 5] : brand === 'diners' ? [4, 6, 4] : [4, 4, 4, 4, 3];
      var parts = [];
      var at = 0;
      for (var i = 0; i < groups.length && at < digits.length; i++) {
        parts.push(digits.slice(at, at + groups[i]));
        at += groups[i];
      }
      if (at < digits.length) parts.push(digits.slice(at));
      return parts.join(' ');
    }
    if (field === 'expiry') {
      // "4" means April: 04.
      if (digits.length === 1 && Number(digits) > 1) digits = '0' + digits;
      digits = digits.slice(0, 4);
      return digits.length > 2 ? digits.slice(0, 2) + ' / ' + digits.slice(2) : digits;
    }
    return digits.slice(0, 4);
  }

  // Autofill may give the expiry as MM/YYYY, MM-YY or MMYYYY: keep month and year's last two.
  function normalizeExpiry(raw) {
    var match = /^\s*(\d{1,2})\s*[/\-. ]?\s*(\d{2}|\d{4})\s*$/.exec(raw);
    if (!match) return raw;
    var month = match[1].length === 1 ? '0' + match[1] : match[1];
    return month + match[2].slice(-2);
  }

  // --- State, shown in the frame and told to the page ------------------------------------

  var current = rules[field]('');

  function evaluate() {
    current = rules[field](input.value);
    return current;
  }

  function show(state, reveal) {
    var visible = state.error && !state.empty && (reveal || state.eager) ? state.error : '';
    if (reveal && state.empty) visible = state.error;
    errorLine.textContent = visible;
    input.setAttribute('aria-invalid', visible ? 'true' : 'false');
    document.body.classList.toggle('invalid', Boolean(visible));
    resize();
  }

  function toParent(message) {
    message.holdfast = PROTOCOL;
    message.channel = channelName;
    message.field = field;
    window.parent.postMessage(message, parentOrigin);
  }

  function announce() {
    var state = {
      type: 'change',
      empty: current.empty,
      complete: current.complete,
      valid: current.valid
    };
    if (field === 'number') state.brand = brand;
    toParent(state);
  }

  var lastHeight = 0;
  function resize() {
    var height = Math.ceil(document.documentElement.getBoundingClientRect().height);
    if (height !== lastHeight) {
      lastHeight = height;
      toParent({ type: 'resize', height: height });
    }
  }

  input.addEventListener('input', function () {
    var raw = input.value;
    if (field === 'expiry' && /\d{4}$|\d[/\-.]\d/.test(raw) && raw.indexOf(' / ') === -1) {
      raw = normalizeExpiry(raw);
    }
    if (field === 'number') rules.number(raw); // the brand decides the grouping
    var formatted = format(raw);
    if (formatted !== input.value) input.value = formatted;
    evaluate();
    show(current, touched && !current.valid);
    if (field === 'number') siblings.postMessage({ type: 'brand', brand: brand });
    announce();
  });
  input.addEventListener('focus', function () {
    document.body.classList.add('focused');
    toParent({ type: 'focus' });
  });
  input.addEventListener('blur', function () {
    document.body.classList.remove('focused');
    touched = !current.empty || touched;
    show(current, touched);
    toParent({ type: 'blur' });
  });
  document.querySelector('form').addEventListener('submit', function (event) {
    event.preventDefault();
  });

  // --- Styling: only known properties, only plain values, only through custom properties ----

  function safeValue(value) {
    return typeof value === 'string' && value.length <= 64 &&
      /^[#(),.%\w\s'"-]+$/.test(value) && !/url|expression|image|attr|var/i.test(value);
  }

  function applyStyle(style) {
    if (!style || typeof style !== 'object') return;
    STYLE_STATES.forEach(function (state) {
      var rules = style[state];
      if (!rules || typeof rules !== 'object') return;
      Object.keys(STYLE_PROPERTIES).forEach(function (key) {
        if (Object.prototype.hasOwnProperty.call(rules, key) && safeValue(rules[key])) {
          document.documentElement.style.setProperty('--hf-' + state + '-' + STYLE_PROPERTIES[key], rules[key]);
        }
      });
    });
  }

  function configure(options) {
    applyStyle(options.style);
    if (typeof options.label === 'string' && options.label.length > 0 && options.label.length <= 64) {
      label.textContent = options.label;
      document.title = options.label;
    }
    if (options.hideLabel === true) label.classList.add('visually-hidden');
    if (typeof options.placeholder === 'string' && options.placeholder.length <= 32) {
      input.setAttribute('placeholder', options.placeholder);
    }
    resize();
  }

  // --- The number frame tokenizes, collecting its siblings' values -------------------------

  var pending = {};

  function collect(request, withName) {
    return new Promise(function (resolve) {
      var wanted = withName ? ['expiry', 'cvv', 'name'] : ['expiry', 'cvv'];
      var values = {};
      var timer = setTimeout(function () {
        delete pending[request];
        resolve(values);
      }, COLLECT_TIMEOUT_MS);
      pending[request] = function (reply) {
        values[reply.field] = reply;
        if (wanted.every(function (name) { return values[name]; })) {
          clearTimeout(timer);
          delete pending[request];
          resolve(values);
        }
      };
      siblings.postMessage({ type: 'collect', request: request });
    });
  }

  function fail(request, code, message, failedField) {
    toParent({ type: 'tokenized', request: request, error: { code: code, message: message, field: failedField || null } });
  }

  function tokenize(request, clientSecret, withName) {
    evaluate();
    show(current, true);
    collect(request, withName).then(function (values) {
      siblings.postMessage({ type: 'reveal' });
      var order = [['number', current], ['expiry', values.expiry], ['cvv', values.cvv]];
      if (withName) order.push(['name', values.name]);
      for (var i = 0; i < order.length; i++) {
        var state = order[i][1];
        if (!state) return fail(request, 'field_unavailable', 'The ' + order[i][0] + ' field did not answer.', order[i][0]);
        if (!state.valid) return fail(request, 'field_invalid', state.error, order[i][0]);
      }
      var body = { payment: { number: current.value, expiration: values.expiry.value, cvv: values.cvv.value } };
      if (withName) body.payment.name = values.name.value;
      if (clientSecret) body.clientSecret = clientSecret;
      return holdfastPost('/v1/tokens', body, publicApiKey).then(function (json) {
        toParent({ type: 'tokenized', request: request, token: json.id, brand: json.card && json.card.brand });
      }, function (error) {
        if (!error.code) throw error;
        fail(request, error.code, error.message, FIELD_OF_PARAM[error.field] || null);
      });
    }).catch(function () {
      fail(request, 'network_error', 'Holdfast could not be reached. Try again.', null);
    });
  }

  // --- Messages ---------------------------------------------------------------------------

  siblings.onmessage = function (event) {
    var data = event.data || {};
    if (data.type === 'collect' && field !== 'number') {
      evaluate();
      siblings.postMessage({
        type: 'value', request: data.request, field: field,
        valid: current.valid, empty: current.empty, error: current.error, value: current.valid ? current.value : null
      });
    } else if (data.type === 'value' && field === 'number' && pending[data.request]) {
      pending[data.request](data);
    } else if (data.type === 'reveal' && field !== 'number') {
      touched = true;
      show(evaluate(), true);
    } else if (data.type === 'brand' && field === 'cvv') {
      brand = typeof data.brand === 'string' ? data.brand : 'unknown';
      if (input.value) {
        evaluate();
        show(current, touched);
        announce();
      }
    }
  };

  window.addEventListener('message', function (event) {
    // Only the page that framed us, from the origin it declared, in this protocol.
    if (event.source !== window.parent || event.origin !== parentOrigin) return;
    var data = event.data;
    if (!data || data.holdfast !== PROTOCOL || data.channel !== channelName) return;
    if (data.type === 'configure') configure(data.options || {});
    else if (data.type === 'focus') input.focus();
    else if (data.type === 'clear') {
      input.value = '';
      touched = false;
      evaluate();
      show(current, false);
      announce();
    } else if (data.type === 'tokenize' && field === 'number' && typeof data.request === 'string') {
      tokenize(data.request, typeof data.clientSecret === 'string' ? data.clientSecret : null, data.name === true);
    }
  });

  new ResizeObserver(resize).observe(document.documentElement);
  toParent({ type: 'ready' });
  resize();
})();
