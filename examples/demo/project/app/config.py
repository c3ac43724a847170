"""Settings shared by the client and the server."""

API_VERSION = "v2"
TIMEOUT_SECONDS = 30
RETRIES = 3
