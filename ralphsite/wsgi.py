import os

import django

from ralphsite.core.paths import data_dir
from ralphsite.core.secrets import secret_key_provide

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ralphsite.settings")
# A server is starting (any WSGI server, with or without our gunicorn config): unless SECRET_KEY is set, the
# data dir's key exists before the settings read it. Workers racing here agree on one key (secret_key_provide).
secret_key_provide(data_dir())
django.setup(set_prefix=False)  # what django.core.wsgi.get_wsgi_application does

from ralphsite.server.chunked_body import ChunkedBodyWSGIHandler  # noqa: E402 - needs the settings

application = ChunkedBodyWSGIHandler()
