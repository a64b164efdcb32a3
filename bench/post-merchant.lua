-- wrk script: POST /v1/merchants with the private key in HOLDFAST_KEY.
wrk.method = "POST"
wrk.body = '{"name": "Bench shop", "currency": "EUR"}'
wrk.headers["content-type"] = "application/json"
wrk.headers["x-api-key"] = os.getenv("HOLDFAST_KEY")
