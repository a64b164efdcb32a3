// One POST to Holdfast from a frame on Holdfast's own origin, shared by the field and relay
// frames (served ahead of each): the page never calls Holdfast itself. Resolves with the JSON
// answer; a refusal rejects with an Error carrying Holdfast's `code` and the field (`param`)
// it names, a network failure with an Error without a code.
function holdfastPost(path, body, publicApiKey) {
  'use strict';
  return fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': publicApiKey },
    body: JSON.stringify(body),
    credentials: 'omit',
    cache: 'no-store'
  }).then(function (response) {
    return response.json().then(function (json) {
      if (response.ok) return json;
      var error = json.error || {};
      var failure = new Error(error.message || 'Holdfast refused the request.');
      failure.code = error.code || 'request_failed';
      failure.field = error.param || null;
      throw failure;
    });
  });
}
