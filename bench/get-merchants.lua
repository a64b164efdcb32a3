-- wrk script: GET /v1/merchants?limit=10 with the private key in HOLDFAST_KEY.
wrk.method = "GET"
wrk.path = "/v1/merchants?limit=10"
wrk.headers["x-api-key"] = os.getenv("HOLDFAST_KEY")
