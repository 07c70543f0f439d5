import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ralphsite.settings")
django.setup(set_prefix=False)  # what django.core.wsgi.get_wsgi_application does

from ralphsite.server.chunked_body import ChunkedBodyWSGIHandler  # noqa: E402 - needs the settings

application = ChunkedBodyWSGIHandler()
