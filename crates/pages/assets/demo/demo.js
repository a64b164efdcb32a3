// The demo checkout's own script: what a merchant writes around Holdfast's fields.
(function () {
  'use strict';
  var main = document.getElementById('checkout');
  var form = document.getElementById('pay');
  var button = document.getElementById('pay-button');
  var error = document.getElementById('error');
  var fields = Holdfast.fields({
    clientSecret: main.getAttribute('data-client-secret'),
    fields: { number: '#card-number', expiry: '#card-expiry', cvv: '#card-cvv' },
    style: { base: { fontSize: '16px' } },
  });
  form.addEventListener('submit', function (event) {
    if (document.getElementById('token').value) return; // the token is in: let it post
    event.preventDefault();
    error.textContent = '';
    button.disabled = true;
    fields.tokenize().then(function (result) {
      document.getElementById('token').value = result.token;
      form.submit();
    }, function (failure) {
      error.textContent = failure.message;
      button.disabled = false;
    });
  });
})();
