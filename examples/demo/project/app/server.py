"""Routes of the demo service."""

from app.config import API_VERSION

PREFIX = f"/{API_VERSION}"


def routes():
    return {
        f"{PREFIX}/users": "list_users",
        f"{PREFIX}/users/<id>": "get_user",
    }
