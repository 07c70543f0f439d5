"""Middleware of our own."""

from django.contrib.messages.middleware import MessageMiddleware
from django.http import HttpRequest

API_PREFIX = "/api/"


class AdminMessageMiddleware(MessageMiddleware):
    """Django's messages (the admin's one-time notices) for every page but the API.

    An API response never shows a message, and setting up the message storage (cookie and session
    backends) was measurable on every agent call.
    """

    def process_request(self, request: HttpRequest) -> None:
        if not request.path_info.startswith(API_PREFIX):
            super().process_request(request)
