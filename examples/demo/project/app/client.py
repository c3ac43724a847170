"""A small HTTP client for the demo service."""

from app.config import API_VERSION, RETRIES, TIMEOUT_SECONDS


def url_for(path: str) -> str:
    return f"https://api.example.com/{API_VERSION}/{path.lstrip('/')}"


def fetch(session, path: str):
    for attempt in range(RETRIES):
        response = session.get(url_for(path), timeout=TIMEOUT_SECONDS)
        if response.status_code < 500:
            return response
    return response
